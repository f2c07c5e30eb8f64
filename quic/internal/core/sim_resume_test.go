package core

import (
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// simUpload runs one connection over a netsim profile in which the client
// uploads data on a stream opened as soon as it may; it returns the pair,
// the upload and the trace.
func simUpload(t *testing.T, prof netsim.Profile, seed uint64, ccfg, scfg *Config, data []byte) (*simPair, *earlyUpload, []netsim.Event) {
	t.Helper()
	var trace []netsim.Event
	sp := newSimPair(t, prof, seed, ccfg, scfg, func(e netsim.Event) { trace = append(trace, e) })
	u := &earlyUpload{t: t, data: data}
	sp.client.app, sp.server.app = u.client, u.server
	// The session ticket comes with HANDSHAKE_DONE.
	sp.run(t, func() bool {
		return u.eof && sp.client.conn.HandshakeConfirmed() && sp.server.conn.HandshakeConfirmed() && hasSession(ccfg)
	}, 30*time.Second)
	if string(u.got) != string(data) {
		t.Fatalf("server read %d bytes, want %d", len(u.got), len(data))
	}
	return sp, u, trace
}

// TestSimGeo0RTT: over the geo profile (650 ms round trip), a resumed
// connection with 0-RTT delivers the client's first stream bytes with its
// first flight, and one without 0-RTT after the handshake: exactly one
// round trip plus the serialization of the server's flight and of the
// client's datagram later.
func TestSimGeo0RTT(t *testing.T) {
	prof := profile(t, "geo")
	data := payload(2000, 9)
	ccfg, scfg := resumeConfigs(t, 120)
	ccfg.Allow0RTT, scfg.Allow0RTT = true, true
	simUpload(t, prof, 1, ccfg, scfg, data) // a session ticket

	sp0, u0, _ := simUpload(t, prof, 2, ccfg, scfg, data)
	if !sp0.client.conn.EarlyDataAccepted() || !u0.openedIn0RTT {
		t.Fatalf("0-RTT not used: accepted %v, opened in 0-RTT %v", sp0.client.conn.EarlyDataAccepted(), u0.openedIn0RTT)
	}
	// The 0-RTT data rides in the second datagram of the ClientHello.
	if want := prof.Up.Delay + serialization(2*1200, prof.Up.RateBps); u0.firstAt != want {
		t.Errorf("with 0-RTT the server read the first bytes at %v, want %v", u0.firstAt, want)
	}

	ccfg.Allow0RTT = false
	sp1, u1, trace := simUpload(t, prof, 2, ccfg, scfg, data)
	if sp1.client.conn.early.attempted || !sp1.client.conn.ConnectionState().DidResume {
		t.Fatal("second connection did not resume without 0-RTT")
	}
	// The server's flight leaves when the ClientHello arrives (at the
	// same time as with 0-RTT); the client completes when its last
	// datagram arrived, and sends its data at once, behind the padded
	// Initial ACK it sent when the flight's first datagram arrived.
	completed := sp1.client.completedAt
	var down int
	for _, e := range trace {
		if e.Kind == netsim.EventSend && e.From == serverAddr && e.At == u0.firstAt {
			down += e.Size
		}
	}
	rtt := prof.Up.Delay + prof.Down.Delay
	if want := u0.firstAt + prof.Down.Delay + serialization(down, prof.Down.RateBps); completed != want {
		t.Errorf("client completed at %v, want %v", completed, want)
	}
	if want := fifoArrival(trace, clientAddr, completed, prof.Up); u1.firstAt != want {
		t.Errorf("without 0-RTT the server read the first bytes at %v, want %v", u1.firstAt, want)
	}
	if u1.firstAt-u0.firstAt < rtt {
		t.Errorf("0-RTT saved %v, less than a round trip", u1.firstAt-u0.firstAt)
	}
	t.Logf("first stream bytes at the server: %v with 0-RTT, %v without (server flight %d B)", u0.firstAt, u1.firstAt, down)
}

// fifoArrival is when the first datagram from sent at time at arrives
// over link, which serializes the sender's datagrams one after the other
// (the netsim link model without loss or jitter).
func fifoArrival(trace []netsim.Event, from netip.AddrPort, at time.Duration, link netsim.LinkConfig) time.Duration {
	var free time.Duration // when the link is done with the previous datagram
	for _, e := range trace {
		if e.Kind != netsim.EventSend || e.From != from {
			continue
		}
		free = max(free, e.At) + serialization(e.Size, link.RateBps)
		if e.At == at {
			return free + link.Delay
		}
	}
	return -1
}
