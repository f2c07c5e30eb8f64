package core

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// datagramPair is a confirmed pair whose ends enabled DATAGRAM frames as
// told.
func datagramPair(t *testing.T, seed uint64, client, server bool) *pair {
	t.Helper()
	ccfg, scfg := testConfigs(t, seed)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = client, server
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	return p
}

// numbered is a datagram of n bytes that starts with its number i.
func numbered(i, n int) []byte {
	b := make([]byte, max(n, 4))
	binary.BigEndian.PutUint32(b, uint32(i))
	for j := 4; j < len(b); j++ {
		b[j] = byte(i + j)
	}
	return b
}

// drainDatagrams reads every datagram c has and returns their numbers.
func drainDatagrams(c *Conn) []int {
	var got []int
	for {
		b, ok := c.ReceiveDatagram()
		if !ok {
			return got
		}
		got = append(got, int(binary.BigEndian.Uint32(b)))
	}
}

// TestDatagramNegotiation: DATAGRAM frames are offered in
// max_datagram_frame_size (RFC 9221 section 3) and used only when both
// ends offered them.
func TestDatagramNegotiation(t *testing.T) {
	for _, tc := range []struct{ client, server bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
		p := datagramPair(t, 300, tc.client, tc.server)
		both := tc.client && tc.server
		for _, side := range []struct {
			name         string
			c            *Conn
			local, other bool
		}{{"client", p.client, tc.client, tc.server}, {"server", p.server, tc.server, tc.client}} {
			if got := side.c.SupportsDatagrams(); got != both {
				t.Errorf("%+v: %s SupportsDatagrams %v", tc, side.name, got)
			}
			pp, _ := side.c.PeerParams()
			want := uint64(0)
			if side.other {
				want = DefaultMaxReceiveDatagramSize
			}
			if pp.MaxDatagramFrameSize != want {
				t.Errorf("%+v: %s saw max_datagram_frame_size %d, want %d", tc, side.name, pp.MaxDatagramFrameSize, want)
			}
			err := side.c.SendDatagram(p.now, []byte("x"))
			if both != (err == nil) || (!both && !errors.Is(err, ErrDatagramsNotNegotiated)) {
				t.Errorf("%+v: %s SendDatagram: %v", tc, side.name, err)
			}
			if n := side.c.MaxDatagramPayloadSize(); (n > 0) != both {
				t.Errorf("%+v: %s MaxDatagramSize %d", tc, side.name, n)
			}
		}
	}
}

// TestDatagramExchange: datagrams go both ways, arrive in order on a clean
// path, and the receiver learns of them through one event per batch.
func TestDatagramExchange(t *testing.T) {
	p := datagramPair(t, 301, true, true)
	const n = 50
	for i := range n {
		if err := p.client.SendDatagram(p.now, numbered(i, 100)); err != nil {
			t.Fatal(err)
		}
		if err := p.server.SendDatagram(p.now, numbered(1000+i, 200)); err != nil {
			t.Fatal(err)
		}
	}
	var atServer, atClient []int
	p.serverApp = func(time.Duration, *Conn) { atServer = append(atServer, drainDatagrams(p.server)...) }
	p.clientApp = func(time.Duration, *Conn) { atClient = append(atClient, drainDatagrams(p.client)...) }
	p.mustRun(func() bool { return len(atServer) == n && len(atClient) == n }, p.now+time.Second)
	for i := range n {
		if atServer[i] != i || atClient[i] != 1000+i {
			t.Fatalf("datagram %d: server got %d, client got %d", i, atServer[i], atClient[i])
		}
	}
	if !hasEvent(p.serverEvents, EventDatagramReceived) || !hasEvent(p.clientEvents, EventDatagramReceived) {
		t.Error("no EventDatagramReceived")
	}
	cs, ss := p.client.Stats().Datagrams, p.server.Stats().Datagrams
	if cs.Queued != n || cs.Sent != n || cs.Received != n || ss.Received != n || cs.SendDropped+cs.ReceiveDropped+cs.Lost != 0 {
		t.Errorf("client stats %+v, server stats %+v", cs, ss)
	}
	// Small datagrams share packets.
	if st := p.client.Stats(); st.PacketsSent > 30 {
		t.Errorf("client sent %d packets for %d datagrams of 100 bytes", st.PacketsSent, n)
	}
}

// TestDatagramTooLarge: SendDatagram refuses a payload above the size
// that fits in a packet, and a payload of exactly that size goes out in
// one datagram of the path's size.
func TestDatagramTooLarge(t *testing.T) {
	ccfg, scfg := testConfigs(t, 302)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	// No path MTU probes, whose datagrams are larger.
	ccfg.DisablePathMTUDiscovery = true
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	max := p.client.MaxDatagramPayloadSize()
	var tooLarge *DatagramTooLargeError
	if err := p.client.SendDatagram(p.now, make([]byte, max+1)); !errors.As(err, &tooLarge) || tooLarge.MaxDataLen != max {
		t.Fatalf("SendDatagram(%d bytes): %v, want *DatagramTooLargeError{%d}", max+1, err, max)
	}
	// The default path size is 1200 bytes: a short header of 1 + 8 + 4
	// bytes, the AEAD tag (16), the frame's type (1) and Length (2).
	if want := DefaultMaxDatagramSize - 13 - 16 - 3; max != want {
		t.Errorf("MaxDatagramSize %d, want %d", max, want)
	}
	if err := p.client.SendDatagram(p.now, numbered(7, max)); err != nil {
		t.Fatal(err)
	}
	sent := len(p.sizes[0])
	var got []int
	p.serverApp = func(time.Duration, *Conn) { got = append(got, drainDatagrams(p.server)...) }
	p.mustRun(func() bool { return len(got) == 1 }, p.now+time.Second)
	// The packet number takes 1 to 4 bytes.
	if sizes := p.sizes[0][sent:]; slices.Max(sizes) > DefaultMaxDatagramSize || slices.Max(sizes) < DefaultMaxDatagramSize-3 {
		t.Errorf("client sent datagrams of %v bytes", sizes)
	}
}

// TestDatagramPathShrinks: a queued datagram that no longer fits after the
// path's size fell is dropped and counted, and the queue goes on.
func TestDatagramPathShrinks(t *testing.T) {
	p := datagramPair(t, 303, true, true)
	p.client.maxDatagram = 1400
	big := p.client.MaxDatagramPayloadSize()
	if err := p.client.SendDatagram(p.now, numbered(1, big)); err != nil {
		t.Fatal(err)
	}
	if err := p.client.SendDatagram(p.now, numbered(2, 100)); err != nil {
		t.Fatal(err)
	}
	p.client.maxDatagram = DefaultMaxDatagramSize
	var got []int
	p.serverApp = func(time.Duration, *Conn) { got = append(got, drainDatagrams(p.server)...) }
	p.mustRun(func() bool { return len(got) == 1 }, p.now+time.Second)
	if got[0] != 2 || p.client.Stats().Datagrams.SendDropped != 1 {
		t.Errorf("server got %v, client dropped %d", got, p.client.Stats().Datagrams.SendDropped)
	}
}

// TestDatagramViolations: a DATAGRAM frame the receiver did not offer to
// take, or larger than its max_datagram_frame_size, closes the connection
// with PROTOCOL_VIOLATION (RFC 9221 section 3), with or without its
// Length field.
func TestDatagramViolations(t *testing.T) {
	for i, tc := range []struct {
		name    string
		enabled bool
		size    int
		withLen bool
	}{
		{"not offered, with length", false, 10, true},
		{"not offered, to the end", false, 10, false},
		{"above the limit, with length", true, 1300, true},
		{"above the limit, to the end", true, 1300, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ccfg, scfg := testConfigs(t, uint64(310+i))
			ccfg.EnableDatagrams, scfg.EnableDatagrams = true, tc.enabled
			scfg.MaxReceiveDatagramSize = 1250
			p := newPair(t, ccfg, scfg, 5*time.Millisecond)
			p.mustRun(p.confirmed, 5*time.Second)
			f := &wire.DatagramFrame{Data: make([]byte, tc.size), DataLenPresent: tc.withLen}
			pl := frameBytes(t, f)
			p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, pl, 0)})
			var ce *ConnError
			if !errors.As(p.server.Err(), &ce) || ce.Code != wire.CodeProtocolViolation || ce.FrameType != uint64(f.Type()) {
				t.Fatalf("server closed with %v, want PROTOCOL_VIOLATION on frame 0x%x", p.server.Err(), uint64(f.Type()))
			}
		})
	}
	// Within the limit, both encodings are taken.
	ccfg, scfg := testConfigs(t, 320)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	pl := frameBytes(t, &wire.DatagramFrame{Data: numbered(1, 10), DataLenPresent: true}, &wire.DatagramFrame{Data: numbered(2, 10)})
	p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, pl, 0)})
	if got := drainDatagrams(p.server); p.server.Err() != nil || len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("server got %v, err %v", got, p.server.Err())
	}
}

// TestDatagramSendQueueBound: a full send queue drops its oldest
// datagram; the newest go out.
func TestDatagramSendQueueBound(t *testing.T) {
	ccfg, scfg := testConfigs(t, 304)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	ccfg.DatagramSendQueue = 10
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	for i := range 25 {
		if err := p.client.SendDatagram(p.now, numbered(i, 50)); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	p.serverApp = func(time.Duration, *Conn) { got = append(got, drainDatagrams(p.server)...) }
	p.mustRun(func() bool { return len(got) == 10 }, p.now+time.Second)
	if got[0] != 15 || got[9] != 24 {
		t.Errorf("server got %v, want 15 to 24", got)
	}
	if st := p.client.Stats().Datagrams; st.Queued != 25 || st.SendDropped != 15 || st.Sent != 10 {
		t.Errorf("client stats %+v", st)
	}
}

// TestDatagramReceiveQueueBound: datagrams that arrive while the receive
// queue is full are dropped and counted; those queued stay readable.
func TestDatagramReceiveQueueBound(t *testing.T) {
	ccfg, scfg := testConfigs(t, 305)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	scfg.DatagramReceiveQueue = 8
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	for i := range 20 {
		if err := p.client.SendDatagram(p.now, numbered(i, 50)); err != nil {
			t.Fatal(err)
		}
	}
	p.mustRun(func() bool { return p.server.Stats().Datagrams.Received == 20 }, p.now+time.Second)
	got := drainDatagrams(p.server)
	if len(got) != 8 || got[0] != 0 || got[7] != 7 {
		t.Errorf("server read %v, want 0 to 7", got)
	}
	if st := p.server.Stats().Datagrams; st.ReceiveDropped != 12 {
		t.Errorf("server stats %+v", st)
	}
	// The queue takes datagrams again once read.
	if err := p.client.SendDatagram(p.now, numbered(99, 50)); err != nil {
		t.Fatal(err)
	}
	n := len(p.serverEvents)
	p.mustRun(func() bool { return p.server.Stats().Datagrams.Received == 21 }, p.now+time.Second)
	if got := drainDatagrams(p.server); len(got) != 1 || got[0] != 99 || !hasEvent(p.serverEvents[n:], EventDatagramReceived) {
		t.Errorf("after draining: read %v, events %v", got, p.serverEvents[n:])
	}
}

// TestDatagramNotRetransmitted: the packet that carries a datagram is
// lost; the datagram is not sent again (RFC 9221 section 5.2), while the
// stream data of the same packet is, and the loss counts for congestion
// control as any.
func TestDatagramNotRetransmitted(t *testing.T) {
	p := datagramPair(t, 306, true, true)
	id, err := p.client.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.client.SendDatagram(p.now, numbered(1, 100)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.StreamWrite(id, []byte("stream data")); err != nil {
		t.Fatal(err)
	}
	first := p.sent[0]
	p.drop = func(toServer bool, n int, _ []byte) bool { return toServer && n == first }
	var stream []byte
	p.serverApp = func(now time.Duration, c *Conn) {
		if _, err := c.streams.get(id); err == nil {
			readAll(t, now, c, id, &stream)
		}
	}
	p.mustRun(func() bool { return string(stream) == "stream data" }, p.now+5*time.Second)
	p.mustRun(func() bool { return p.client.Stats().BytesInFlight == 0 }, p.now+5*time.Second)
	cs := p.client.Stats()
	if got := drainDatagrams(p.server); len(got) != 0 {
		t.Errorf("server got datagrams %v", got)
	}
	if cs.Datagrams.Sent != 1 || cs.Datagrams.Lost != 1 || cs.PacketsLost != 1 || cs.StreamBytesRetransmitted != uint64(len("stream data")) {
		t.Errorf("client: datagrams %+v, %d packets lost, %d stream bytes sent again", cs.Datagrams, cs.PacketsLost, cs.StreamBytesRetransmitted)
	}
	if cs.Recovery.CongestionSignals == 0 {
		t.Errorf("the loss was no congestion signal: %+v", cs.Recovery)
	}
}

// TestDatagram0RTT: a client resuming with 0-RTT sends datagrams under
// the server's remembered max_datagram_frame_size, and they arrive with
// its first flight (RFC 9221 section 3); a server that no longer offers
// DATAGRAM frames would lower the remembered value, so it declines 0-RTT.
func TestDatagram0RTT(t *testing.T) {
	const delay = 30 * time.Millisecond
	for _, serverKeeps := range []bool{true, false} {
		ccfg, scfg := resumeConfigs(t, 330)
		ccfg.Allow0RTT, scfg.Allow0RTT = true, true
		ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
		primeSession(t, ccfg, scfg, delay)
		scfg.EnableDatagrams = serverKeeps
		p := newPair(t, ccfg, scfg, delay)
		sentEarly := false
		p.clientApp = func(now time.Duration, c *Conn) {
			if !sentEarly && c.SupportsDatagrams() {
				if err := c.SendDatagram(now, numbered(5, 100)); err != nil {
					t.Fatal(err)
				}
				sentEarly = !c.HandshakeComplete()
			}
		}
		var got []int
		var at time.Duration
		p.serverApp = func(now time.Duration, c *Conn) {
			if d := drainDatagrams(c); len(d) > 0 {
				got, at = append(got, d...), now
			}
		}
		p.mustRun(p.confirmed, 5*time.Second)
		if serverKeeps {
			p.mustRun(func() bool { return len(got) == 1 }, p.now+time.Second)
			if !sentEarly || at != delay || !p.client.EarlyDataAccepted() {
				t.Errorf("sent in 0-RTT %v, arrived at %v (want %v), 0-RTT accepted %v", sentEarly, at, delay, p.client.EarlyDataAccepted())
			}
			continue
		}
		// Declined: the datagram sent in 0-RTT is gone, the client has
		// no DATAGRAM frames any more, and the connection stands.
		if p.server.EarlyDataAccepted() || p.client.SupportsDatagrams() || len(got) != 0 || p.client.Err() != nil {
			t.Errorf("server without datagrams: 0-RTT accepted %v, client supports %v, server got %v, client err %v",
				p.server.EarlyDataAccepted(), p.client.SupportsDatagrams(), got, p.client.Err())
		}
	}
}

// TestDatagramQlog: DATAGRAM frames appear with their length in the
// frames of packet_sent at the sender and packet_received at the
// receiver.
func TestDatagramQlog(t *testing.T) {
	ccfg, scfg := testConfigs(t, 307)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	var cq, sq bytes.Buffer
	ccfg.Qlog, scfg.Qlog = &cq, &sq
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	if err := p.client.SendDatagram(p.now, numbered(1, 321)); err != nil {
		t.Fatal(err)
	}
	p.mustRun(func() bool { return p.server.Stats().Datagrams.Received == 1 }, p.now+time.Second)
	for _, side := range []struct {
		name, event string
		out         []byte
	}{{"client", "transport:packet_sent", cq.Bytes()}, {"server", "transport:packet_received", sq.Bytes()}} {
		_, evs := parseQlog(t, side.out)
		found := 0
		for _, ev := range evs {
			if ev.Name != side.event {
				continue
			}
			frames, _ := ev.Data["frames"].([]any)
			for _, f := range frames {
				m, _ := f.(map[string]any)
				if m["frame_type"] == "datagram" {
					found++
					if m["length"] != float64(321) {
						t.Errorf("%s: %s datagram frame %v", side.name, side.event, m)
					}
				}
			}
		}
		if found != 1 {
			t.Errorf("%s: %d datagram frames in %s events, want 1", side.name, found, side.event)
		}
	}
}

// TestDatagram0RTTReducedLimit: a client whose 0-RTT the server accepted
// checks that the server's new max_datagram_frame_size is not below the
// remembered one (RFC 9221 section 3).
func TestDatagram0RTTReducedLimit(t *testing.T) {
	ccfg, _ := testConfigs(t, 331)
	c, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	c.early.attempted = true
	c.early.params = wire.DefaultTransportParameters()
	c.early.params.MaxDatagramFrameSize = DefaultMaxReceiveDatagramSize
	peer := c.early.params
	if err := c.early.onHandshakeDone(&peer); err != nil {
		t.Fatalf("same limit: %v", err)
	}
	peer.MaxDatagramFrameSize = DefaultMaxReceiveDatagramSize - 1
	var te *wire.TransportError
	if err := c.early.onHandshakeDone(&peer); !errors.As(err, &te) || te.Code != wire.CodeProtocolViolation {
		t.Fatalf("lowered max_datagram_frame_size: %v", err)
	}
}

// TestDatagramNotLostOnProbe: a probe timeout sends probes while the
// packet carrying a datagram is still in flight; the datagram is not sent
// again, and it is not counted lost when its packet is acknowledged
// afterwards.
func TestDatagramNotLostOnProbe(t *testing.T) {
	p := datagramPair(t, 307, true, true)
	if err := p.client.SendDatagram(p.now, numbered(1, 100)); err != nil {
		t.Fatal(err)
	}
	quietUntil := p.now + time.Second
	p.drop = func(toServer bool, _ int, _ []byte) bool { return !toServer && p.now < quietUntil }
	p.mustRun(func() bool { return p.client.Stats().ProbesSent > 0 }, quietUntil)
	p.mustRun(func() bool { return p.client.Stats().BytesInFlight == 0 }, quietUntil+5*time.Second)
	cs := p.client.Stats()
	if got := drainDatagrams(p.server); len(got) != 1 || got[0] != 1 {
		t.Errorf("server got datagrams %v, want [1]", got)
	}
	if cs.Datagrams.Sent != 1 || cs.Datagrams.Lost != 0 || cs.PacketsLost != 0 {
		t.Errorf("client: datagrams %+v, %d packets lost, want one sent and none lost", cs.Datagrams, cs.PacketsLost)
	}
}
