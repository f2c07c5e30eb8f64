package netsim

import (
	"net/netip"
	"slices"
	"testing"
	"time"
)

// ecnBurst sends count datagrams at time 0, the i-th with codepoints[i %
// len(codepoints)] and i as its first byte.
type ecnBurst struct {
	to         netip.AddrPort
	count      int
	codepoints []ECN
	sent       bool
}

func (b *ecnBurst) Receive(time.Duration, netip.AddrPort, []byte) {}

func (b *ecnBurst) Poll(time.Duration) ([]Datagram, time.Duration, bool) {
	if b.sent {
		return nil, 0, false
	}
	b.sent = true
	out := make([]Datagram, b.count)
	for i := range out {
		out[i] = Datagram{To: b.to, Data: packet(byte(i), 1000), ECN: b.codepoints[i%len(b.codepoints)]}
	}
	return out, 0, false
}

// ecnRecorder records the codepoint each datagram arrived with, by the
// datagram's first byte.
type ecnRecorder struct{ got map[byte]ECN }

func (r *ecnRecorder) Receive(time.Duration, netip.AddrPort, []byte) {
	panic("ReceiveECN expected")
}

func (r *ecnRecorder) ReceiveECN(_ time.Duration, _ netip.AddrPort, data []byte, ecn ECN) {
	r.got[data[0]] = ecn
}

func (r *ecnRecorder) Poll(time.Duration) ([]Datagram, time.Duration, bool) { return nil, 0, false }

func runECNBurst(t *testing.T, link LinkConfig, codepoints []ECN, count int) ([]ECN, []Event) {
	t.Helper()
	var events []Event
	n := NewNetwork(NetworkConfig{Seed: 1, OnEvent: func(e Event) { events = append(events, e) }})
	if _, err := n.AddPath(clientAddr.Addr(), serverAddr.Addr(), link, link); err != nil {
		t.Fatal(err)
	}
	rec := &ecnRecorder{got: map[byte]ECN{}}
	if err := n.Attach(serverAddr, rec); err != nil {
		t.Fatal(err)
	}
	if err := n.Attach(clientAddr, &ecnBurst{to: serverAddr, count: count, codepoints: codepoints}); err != nil {
		t.Fatal(err)
	}
	if err := n.Run(time.Second); err != nil {
		t.Fatal(err)
	}
	got := make([]ECN, count)
	for i := range got {
		e, ok := rec.got[byte(i)]
		if !ok {
			t.Fatalf("datagram %d did not arrive", i)
		}
		got[i] = e
	}
	return got, events
}

// A queue above its threshold marks ECN-capable datagrams CE and leaves
// the others; the codepoints travel with the datagrams.
func TestNetworkECNMarks(t *testing.T) {
	cps := []ECN{ECT0, NotECT, ECT1}
	// 1000-byte datagrams at 10 Mbit/s: from the fifth on, each finds
	// 3000 bytes or more waiting ahead of it (the first is on the wire),
	// above 2500; the fifth is not ECN-capable and stays unmarked.
	got, events := runECNBurst(t, LinkConfig{RateBps: 10e6, Delay: 10 * ms, ECNThreshold: 2500}, cps, 7)
	want := []ECN{ECT0, NotECT, ECT1, ECT0, NotECT, CE, CE}
	if !slices.Equal(got, want) {
		t.Errorf("arrived with %v, want %v", got, want)
	}
	sent := 0
	for _, e := range events {
		if e.Kind == EventSend {
			if e.ECN != cps[sent%len(cps)] {
				t.Errorf("send event %d has %v, want %v", sent, e.ECN, cps[sent%len(cps)])
			}
			sent++
		}
	}
	if sent != 7 {
		t.Errorf("%d send events, want 7", sent)
	}
}

// A bleaching link clears every codepoint, marks included.
func TestNetworkECNBleach(t *testing.T) {
	got, _ := runECNBurst(t, LinkConfig{RateBps: 10e6, Delay: 10 * ms, ECNThreshold: 2500, BleachECN: true}, []ECN{ECT0, CE}, 6)
	for i, e := range got {
		if e != NotECT {
			t.Errorf("datagram %d arrived %v over a bleaching link", i, e)
		}
	}
}

// An endpoint without ReceiveECN still gets its datagrams.
func TestNetworkECNPlainEndpoint(t *testing.T) {
	n := newPingNetwork(t, 1, LinkConfig{RateBps: 10e6, Delay: 15 * ms, ECNThreshold: 1})
	p := &pinger{to: serverAddr, size: 1000, interval: 100 * ms, count: 3}
	if err := n.Attach(serverAddr, &echoServer{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Attach(clientAddr, p); err != nil {
		t.Fatal(err)
	}
	if err := n.Run(time.Second); err != nil {
		t.Fatal(err)
	}
	if len(p.echoes) != 3 {
		t.Errorf("%d echoes, want 3", len(p.echoes))
	}
}

func TestECNString(t *testing.T) {
	for e, want := range map[ECN]string{NotECT: "Not-ECT", ECT1: "ECT(1)", ECT0: "ECT(0)", CE: "CE"} {
		if e.String() != want {
			t.Errorf("%d.String() = %q, want %q", e, e.String(), want)
		}
	}
}
