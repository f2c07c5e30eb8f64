package netsim

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// windowSender keeps window packets of size bytes in flight to peer,
// sending a new one for every acknowledgement (no loss recovery: the tests
// that use it have no loss). An acknowledgement is the head of the packet it
// acknowledges, so the sender recycles its buffer and does not allocate.
type windowSender struct {
	peer     netip.AddrPort
	size     int
	window   int
	inFlight int
	seq      uint32
	free     [][]byte
	out      []Datagram
}

func (s *windowSender) Receive(_ time.Duration, _ netip.AddrPort, ack []byte) {
	s.inFlight--
	if cap(ack) >= s.size {
		s.free = append(s.free, ack[:s.size])
	}
}

func (s *windowSender) buffer() []byte {
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b
	}
	return make([]byte, s.size)
}

func (s *windowSender) Poll(time.Duration) ([]Datagram, time.Duration, bool) {
	out := s.out[:0]
	for ; s.inFlight < s.window; s.inFlight++ {
		p := s.buffer()
		binary.BigEndian.PutUint32(p, s.seq)
		s.seq++
		out = append(out, Datagram{To: s.peer, Data: p})
	}
	s.out = out
	return out, 0, false
}

// acker acknowledges every packet with a 40-byte datagram and counts bytes.
type acker struct {
	pending []Datagram
	bytes   int64
	packets int64
}

func (a *acker) Receive(_ time.Duration, from netip.AddrPort, data []byte) {
	a.bytes += int64(len(data))
	a.packets++
	a.pending = append(a.pending, Datagram{To: from, Data: data[:40]})
}

func (a *acker) Poll(time.Duration) ([]Datagram, time.Duration, bool) {
	out := a.pending
	a.pending = a.pending[:0] // the network reads out only during Poll
	return out, 0, false
}

// runGEODownload runs a window-limited download over the geo profile for
// the given virtual time and returns the receiver and the network.
func runGEODownload(tb testing.TB, virtual time.Duration) (*acker, *Network) {
	tb.Helper()
	n := NewNetwork(NetworkConfig{Seed: 1})
	p, err := LookupProfile("geo")
	if err != nil {
		tb.Fatal(err)
	}
	// A queue of two BDPs takes the initial burst of a window a little
	// larger than the pipe (which also holds the ACKs' serialization).
	p.Down.QueueBytes = 2 * p.BDPBytes()
	if _, err := n.AddProfilePath(clientAddr.Addr(), serverAddr.Addr(), p); err != nil {
		tb.Fatal(err)
	}
	recv := &acker{}
	// 4000 x 1200 B: more than the 650 ms BDP (3385 packets), so the link
	// stays busy.
	if err := n.Attach(serverAddr, &windowSender{peer: clientAddr, size: 1200, window: 4000}); err != nil {
		tb.Fatal(err)
	}
	if err := n.Attach(clientAddr, recv); err != nil {
		tb.Fatal(err)
	}
	if err := n.Run(virtual); err != nil {
		tb.Fatal(err)
	}
	return recv, n
}

// TestGEODownloadSaturatesLink: packet k reaches the client at
// (k+1) x 192 us + 325 ms (1200 B at 50 Mbit/s, then propagation), and the
// window keeps the serializer busy, so the count at 60 s is exact.
func TestGEODownloadSaturatesLink(t *testing.T) {
	recv, n := runGEODownload(t, 60*time.Second)
	want := int64((60*time.Second - 325*time.Millisecond) / (192 * time.Microsecond))
	if recv.packets != want {
		t.Errorf("received %d packets by 60 s, want %d", recv.packets, want)
	}
	down, _ := n.Paths()[0].Stats()
	if down.Dropped() != 0 {
		t.Errorf("down link dropped %d", down.Dropped())
	}
}

// BenchmarkNetworkGEO reports simulator speed: scheduler events per second
// and virtual seconds per CPU second for a saturated 50 Mbit/s GEO download.
func BenchmarkNetworkGEO(b *testing.B) {
	const virtual = 20 * time.Second
	var events int64
	for b.Loop() {
		_, n := runGEODownload(b, virtual)
		events += n.Stats().Events
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(events)/sec/1e6, "Mevents/s")
	b.ReportMetric(float64(b.N)*virtual.Seconds()/sec, "virtual-s/s")
}
