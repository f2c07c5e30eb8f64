package core

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// earlyRequest is a client that sends a request on a bidirectional stream
// as soon as it may (in 0-RTT when resuming with it) and a server that
// answers with a response once it has read the whole request. Both sides
// note when the first and the last response bytes arrived.
type earlyRequest struct {
	t         testing.TB
	req, resp []byte

	id      uint64
	opened  bool
	in0RTT  bool
	written int

	reqGot      []byte
	reqDone     bool
	respWritten int
	respClosed  bool
	// respStart is when the server started writing its response, and
	// respComplete whether the handshake was complete at the server then.
	respStart    time.Duration
	respComplete bool

	respGot []byte
	firstAt time.Duration // first response bytes readable at the client
	doneAt  time.Duration // whole response read
	done    bool
}

func (r *earlyRequest) client(now time.Duration, c *Conn) {
	if !r.opened {
		id, err := c.OpenStream(now, true)
		if err != nil {
			if !errors.Is(err, ErrHandshakeIncomplete) {
				r.t.Fatalf("OpenStream: %v", err)
			}
			return
		}
		r.id, r.opened, r.in0RTT = id, true, !c.HandshakeComplete()
	}
	if r.written < len(r.req) {
		n, err := c.StreamWrite(r.id, r.req[r.written:])
		if err != nil {
			r.t.Fatalf("StreamWrite: %v", err)
		}
		if r.written += n; r.written == len(r.req) {
			if err := c.CloseWrite(r.id); err != nil {
				r.t.Fatal(err)
			}
		}
	}
	if r.done {
		return
	}
	if r.firstAt == 0 && c.StreamReadable(r.id) > 0 {
		r.firstAt = now
	}
	if r.done = readAll(r.t, now, c, r.id, &r.respGot); r.done {
		r.doneAt = now
	}
}

func (r *earlyRequest) server(now time.Duration, c *Conn) {
	if !r.opened {
		return
	}
	if _, err := c.streams.get(r.id); err != nil {
		return
	}
	if !r.reqDone {
		if r.reqDone = readAll(r.t, now, c, r.id, &r.reqGot); !r.reqDone {
			return
		}
		r.respStart, r.respComplete = now, c.HandshakeComplete()
	}
	for r.respWritten < len(r.resp) {
		n, err := c.StreamWrite(r.id, r.resp[r.respWritten:])
		if err != nil {
			r.t.Fatalf("StreamWrite: %v", err)
		}
		if n == 0 {
			return
		}
		r.respWritten += n
	}
	if !r.respClosed {
		if err := c.CloseWrite(r.id); err != nil {
			r.t.Fatal(err)
		}
		r.respClosed = true
	}
}

// simRequest runs one connection over prof in which the client sends req
// and reads the server's resp; it returns the pair, the exchange and the
// trace.
func simRequest(t *testing.T, prof netsim.Profile, seed uint64, ccfg, scfg *Config, req, resp []byte) (*simPair, *earlyRequest, []netsim.Event) {
	t.Helper()
	var trace []netsim.Event
	sp := newSimPair(t, prof, seed, ccfg, scfg, func(e netsim.Event) { trace = append(trace, e) })
	r := &earlyRequest{t: t, req: req, resp: resp}
	sp.client.app, sp.server.app = r.client, r.server
	sp.run(t, func() bool {
		return r.done && sp.client.conn.HandshakeConfirmed() && sp.server.conn.HandshakeConfirmed() && hasSession(ccfg)
	}, 30*time.Second)
	if string(r.reqGot) != string(req) || string(r.respGot) != string(resp) {
		t.Fatalf("server read %d request bytes of %d, client %d response bytes of %d", len(r.reqGot), len(req), len(r.respGot), len(resp))
	}
	return sp, r, trace
}

// TestSimGeo0RTTResponse: over the geo profile (650 ms round trip), the
// server answers a request that came in 0-RTT at once, with its handshake
// flight (0.5-RTT data, RFC 9001 section 4.1.1): the first response bytes
// reach the client one round trip earlier than on a resumed connection
// without 0-RTT. Before 0.5-RTT data the server held the response until
// the client's Finished, and 0-RTT saved nothing on it: first response
// bytes at 1.304 s both ways; now 0.652 s with 0-RTT. A response that
// fits the server's anti-amplification budget beside the flight arrives
// whole with it; a larger one goes on after the handshake.
func TestSimGeo0RTTResponse(t *testing.T) {
	prof := profile(t, "geo")
	rtt := prof.Up.Delay + prof.Down.Delay
	req := payload(200, 3)
	for _, size := range []int{1000, 20000} {
		resp := payload(size, 4)
		ccfg, scfg := resumeConfigs(t, 130)
		ccfg.Allow0RTT, scfg.Allow0RTT = true, true
		simRequest(t, prof, 1, ccfg, scfg, req, resp) // a session ticket

		sp0, r0, trace := simRequest(t, prof, 2, ccfg, scfg, req, resp)
		if !sp0.server.conn.EarlyDataAccepted() || !r0.in0RTT {
			t.Fatalf("0-RTT not used: accepted %v, request in 0-RTT %v", sp0.server.conn.EarlyDataAccepted(), r0.in0RTT)
		}
		// The request rides in the second datagram of the ClientHello,
		// and the response starts before the handshake completes.
		if want := prof.Up.Delay + serialization(2*1200, prof.Up.RateBps); r0.respStart != want || r0.respComplete {
			t.Errorf("%d B: response started at %v (handshake complete %v), want %v before completion", size, r0.respStart, r0.respComplete, want)
		}
		// The first response bytes arrive with the server's first
		// flight, one way after the request arrived.
		first, last := flightArrivals(trace, serverAddr, r0.respStart, prof.Down)
		if r0.firstAt < first || r0.firstAt > last {
			t.Errorf("%d B: first response bytes at %v, want with the server's flight (%v to %v)", size, r0.firstAt, first, last)
		}
		if size == 1000 && r0.doneAt > last {
			t.Errorf("%d B: response complete at %v, want with the flight by %v", size, r0.doneAt, last)
		}

		ccfg.Allow0RTT = false
		sp1, r1, _ := simRequest(t, prof, 2, ccfg, scfg, req, resp)
		if sp1.client.conn.early.attempted || !r1.respComplete {
			t.Fatalf("%d B: second connection used 0-RTT or 0.5-RTT data", size)
		}
		if saved := r1.firstAt - r0.firstAt; saved < rtt {
			t.Errorf("%d B: 0-RTT brought the first response bytes %v earlier, less than a round trip (%v)", size, saved, rtt)
		}
		t.Logf("%d B response: first bytes at %v, complete at %v with 0-RTT; %v and %v without", size, r0.firstAt, r0.doneAt, r1.firstAt, r1.doneAt)
	}
}

// flightArrivals returns when the first and the last of the datagrams
// from sent at time at arrive over link (the netsim link model without
// loss or jitter).
func flightArrivals(trace []netsim.Event, from netip.AddrPort, at time.Duration, link netsim.LinkConfig) (first, last time.Duration) {
	var free time.Duration
	first = -1
	for _, e := range trace {
		if e.Kind != netsim.EventSend || e.From != from || e.At > at {
			continue
		}
		free = max(free, e.At) + serialization(e.Size, link.RateBps)
		if e.At == at {
			if first < 0 {
				first = free + link.Delay
			}
			last = free + link.Delay
		}
	}
	return first, last
}

// Test0RTTResponseFlightLost: the server's first flight, 0.5-RTT data
// included, is lost. The anti-amplification budget the handshake kept in
// reserve lets the server's probe repeat the flight (the pair fails the
// test if the server ever sends more than three times what it received),
// and the response arrives.
func Test0RTTResponseFlightLost(t *testing.T) {
	const delay = 30 * time.Millisecond
	ccfg, scfg := resumeConfigs(t, 140)
	ccfg.Allow0RTT, scfg.Allow0RTT = true, true
	primeSession(t, ccfg, scfg, delay)
	p := newPair(t, ccfg, scfg, delay)
	r := &earlyRequest{t: t, req: payload(200, 5), resp: payload(1000, 6)}
	p.clientApp, p.serverApp = r.client, r.server
	lost := 0
	p.drop = func(toServer bool, _ int, _ []byte) bool {
		if toServer || p.now > delay+time.Millisecond {
			return false
		}
		lost++
		return true
	}
	p.mustRun(func() bool { return r.done && p.confirmed() }, 10*time.Second)
	if string(r.respGot) != string(r.resp) || r.respComplete || lost < 2 {
		t.Fatalf("response %d of %d bytes, started after completion %v, %d datagrams lost", len(r.respGot), len(r.resp), r.respComplete, lost)
	}
	st := p.server.Stats()
	t.Logf("first flight of %d datagrams lost; response at %v; server PTOs %d", lost, r.doneAt, st.Recovery.PTOs)
	if st.Recovery.PTOs == 0 {
		t.Errorf("the flight came back without a server probe")
	}
}
