package core

import (
	"errors"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

func TestCloseApplication(t *testing.T) {
	p := confirmedPair(t, 60)
	p.client.Close(p.now, 0x42, "bye")
	if !p.client.closing.pending || p.client.state != stateClosing {
		t.Fatal("client not closing after Close")
	}
	if _, err := p.client.OpenStream(p.now, true); !errors.Is(err, ErrClosed) {
		t.Fatalf("OpenStream on a closing connection: %v", err)
	}
	p.mustRun(func() bool { return p.server.Err() != nil }, p.now+time.Second)
	var ce *ConnError
	if !errors.As(p.server.Err(), &ce) || !ce.Application || ce.Code != 0x42 || ce.Reason != "bye" || !ce.Remote {
		t.Fatalf("server saw %v", p.server.Err())
	}
	if p.server.state != stateDraining {
		t.Fatalf("server state %d, want draining", p.server.state)
	}
	closedAt := p.now
	// Each end's closing or draining period follows its own estimate.
	pto := max(probeTimeout(p.client.sender.RTT()), probeTimeout(p.server.sender.RTT()))
	p.mustRun(func() bool { return p.client.Closed() && p.server.Closed() }, p.now+10*time.Second)
	// Closing and draining last three PTOs (RFC 9000 section 10.2).
	if p.now > closedAt+3*pto+5*time.Millisecond {
		t.Errorf("closed at %v, want by %v", p.now, closedAt+3*pto)
	}
	p.collectEvents()
	if !hasEvent(p.clientEvents, EventClosed) || !hasEvent(p.serverEvents, EventClosed) {
		t.Error("EventClosed missing")
	}
	if _, ok := p.client.NextTimer(p.now); ok {
		t.Error("a closed connection still has a timer")
	}
}

// TestCloseBeforeHandshake: an application close before the handshake is
// confirmed travels in Initial or Handshake packets as a transport
// APPLICATION_ERROR without its reason (RFC 9000 section 10.2.3).
func TestCloseBeforeHandshake(t *testing.T) {
	ccfg, scfg := testConfigs(t, 61)
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(func() bool { return p.server != nil && p.client.spaces[spaceHandshake].write != nil }, time.Second)
	p.client.Close(p.now, 7, "secret reason")
	p.mustRun(func() bool { return p.server.Err() != nil }, p.now+time.Second)
	var ce *ConnError
	if !errors.As(p.server.Err(), &ce) || ce.Application || ce.Code != wire.CodeApplicationError || ce.Reason != "" {
		t.Fatalf("server saw %v, want a transport APPLICATION_ERROR without reason", p.server.Err())
	}
}

// TestClosingAnswersPackets: a closing endpoint answers incoming packets
// with its CONNECTION_CLOSE, less and less often.
func TestClosingAnswersPackets(t *testing.T) {
	p := confirmedPair(t, 62)
	p.server.Close(p.now, 1, "")
	if _, ok := p.server.NextDatagram(p.now, nil); !ok {
		t.Fatal("no CONNECTION_CLOSE datagram")
	}
	answers := 0
	for range 8 {
		ping := seal1RTT(t, p.now, p.client, []byte{0x01}, 0)
		p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: ping})
		if _, ok := p.server.NextDatagram(p.now, nil); ok {
			answers++
		}
	}
	// Answers to the 1st, 2nd, 4th and 8th datagram.
	if answers != 4 {
		t.Fatalf("%d answers to 8 datagrams, want 4", answers)
	}
}

func TestIdleTimeout(t *testing.T) {
	ccfg, scfg := testConfigs(t, 63)
	ccfg.IdleTimeout = 2 * time.Second
	scfg.IdleTimeout = 5 * time.Second
	// Path MTU probes would leave the client active after the server,
	// which would then close first.
	ccfg.DisablePathMTUDiscovery, scfg.DisablePathMTUDiscovery = true, true
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	// Each end closes 2 s (the smaller timeout) after its last activity.
	for _, c := range []*Conn{p.client, p.server} {
		p.mustRun(c.Closed, 20*time.Second)
		if !errors.Is(c.Err(), ErrIdleTimeout) {
			t.Fatalf("client=%v closed with %v, want an idle timeout", c.isClient, c.Err())
		}
		if p.now != c.idle.last+2*time.Second {
			t.Errorf("client=%v closed at %v, last activity at %v", c.isClient, p.now, c.idle.last)
		}
	}
}

func TestHandshakeTimeout(t *testing.T) {
	ccfg, scfg := testConfigs(t, 64)
	ccfg.HandshakeTimeout = 3 * time.Second
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.drop = func(bool, int, []byte) bool { return true }
	p.mustRun(p.client.Closed, 10*time.Second)
	if !errors.Is(p.client.Err(), ErrHandshakeTimeout) || p.now != 3*time.Second {
		t.Fatalf("client closed at %v with %v, want handshake timeout at 3s", p.now, p.client.Err())
	}
	// Meanwhile the client probed with padded Initials.
	if len(p.sizes[0]) < 3 {
		t.Errorf("client sent %d datagrams in 3 s", len(p.sizes[0]))
	}
	for _, n := range p.sizes[0] {
		if n < 1200 {
			t.Errorf("client datagram of %d bytes carries an Initial", n)
		}
	}
}

// TestStatelessReset: a datagram ending with the server's reset token
// drains the client (RFC 9000 section 10.3.1).
func TestStatelessReset(t *testing.T) {
	ccfg, scfg := testConfigs(t, 65)
	key, err := newResetKey()
	if err != nil {
		t.Fatal(err)
	}
	scfg.ResetKey = key
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	tok, err := key.Token(p.client.cids.dcid().Bytes())
	if err != nil {
		t.Fatal(err)
	}
	reset := append([]byte{0x43}, payload(30, 1)...)
	reset = append(reset, tok[:]...)
	// A packet that looks like a reset but carries another token is
	// only dropped.
	bogus := append([]byte(nil), reset...)
	bogus[len(bogus)-1] ^= 1
	p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: bogus})
	if p.client.Err() != nil {
		t.Fatalf("bogus reset closed the client: %v", p.client.Err())
	}
	p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: reset})
	if !errors.Is(p.client.Err(), ErrStatelessReset) || p.client.state != stateDraining {
		t.Fatalf("client after reset: %v, state %d", p.client.Err(), p.client.state)
	}
}

func TestCloseLongReason(t *testing.T) {
	p := confirmedPair(t, 66)
	long := string(payload(5000, 1))
	p.client.Close(p.now, 3, long)
	p.mustRun(func() bool { return p.server.Err() != nil }, p.now+time.Second)
	var ce *ConnError
	if !errors.As(p.server.Err(), &ce) || ce.Code != 3 || ce.Reason != long[:maxReasonLen] {
		t.Fatalf("server saw %v", p.server.Err())
	}
}

// TestKeepAlive: PINGs every second keep a connection with a 3 s idle
// timeout alive.
func TestKeepAlive(t *testing.T) {
	ccfg, scfg := testConfigs(t, 67)
	ccfg.IdleTimeout, scfg.IdleTimeout = 3*time.Second, 3*time.Second
	ccfg.KeepAlivePeriod = time.Second
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	start := p.sent[0]
	p.run(func() bool { return p.client.Closed() || p.server.Closed() }, 20*time.Second)
	if p.client.Err() != nil || p.server.Err() != nil {
		t.Fatalf("closed: %v / %v", p.client.Err(), p.server.Err())
	}
	if n := p.sent[0] - start; n < 15 || n > 25 {
		t.Errorf("client sent %d datagrams in 20 s with a 1 s keep-alive", n)
	}
}

// TestCloseAfterIdle: Close on a connection idle for longer than its
// closing period still sends CONNECTION_CLOSE, and the closing period runs
// from then, long after the core last heard of the time.
func TestCloseAfterIdle(t *testing.T) {
	p := confirmedPair(t, 63)
	later := p.now + time.Second
	p.client.Close(later, 0x42, "bye")
	// The driver runs the due timers, then asks for datagrams.
	p.client.Step(later, nil)
	if _, ok := p.client.NextDatagram(later, nil); !ok {
		t.Fatal("no CONNECTION_CLOSE after a second of idleness")
	}
	if at, ok := p.client.NextTimer(later); p.client.Closed() || !ok || at < later+3*probeTimeout(p.client.sender.RTT()) {
		t.Errorf("closing period ends at %v (closed %v), want 3 PTOs after %v", at, p.client.Closed(), later)
	}
}

// TestClosingStatePeriod: the closing period starts at the first time the
// state is given, and again when CONNECTION_CLOSE first goes out; a
// datagram the anti-amplification budget does not hold waits for the
// peer's next packet.
func TestClosingStatePeriod(t *testing.T) {
	const pto = 100 * time.Millisecond
	var cl closingState
	cl.startClosing([]byte{1, 2, 3})
	if d, ok := cl.timer(time.Second, pto); !ok || d != time.Second+3*pto {
		t.Fatalf("timer %v %v, want %v", d, ok, time.Second+3*pto)
	}
	if _, ok := cl.take(2*time.Second, pto, 2); ok {
		t.Fatal("sent beyond the anti-amplification budget")
	}
	if d, _ := cl.timer(3*time.Second, pto); d != time.Second+3*pto {
		t.Fatalf("the period moved to %v before CONNECTION_CLOSE went out", d)
	}
	cl.onDatagram()
	if pkt, ok := cl.take(2*time.Second, pto, 3); !ok || len(pkt) != 3 {
		t.Fatal("CONNECTION_CLOSE not sent in answer to the peer's packet")
	}
	if cl.over(2*time.Second+3*pto-1, pto) || !cl.over(2*time.Second+3*pto, pto) {
		t.Error("the period does not end three PTOs after CONNECTION_CLOSE went out")
	}
}

// TestIdleStateTimer: the smaller timeout applies, keep-alives only once
// the handshake is confirmed.
func TestIdleStateTimer(t *testing.T) {
	const pto = 10 * time.Millisecond
	var i idleState
	i.init(0, 5*time.Second, time.Second)
	i.setPeer(2 * time.Second)
	if d, _ := i.timer(pto, false); d != 2*time.Second {
		t.Fatalf("timer %v before confirmation, want the 2 s timeout", d)
	}
	if d, _ := i.timer(pto, true); d != time.Second {
		t.Fatalf("timer %v once confirmed, want the 1 s keep-alive", d)
	}
	if i.onTimer(time.Second, pto, true) || !i.ping {
		t.Fatal("no keep-alive PING due after 1 s")
	}
	if !i.onTimer(2*time.Second, pto, true) {
		t.Error("no timeout after 2 s without activity")
	}
}
