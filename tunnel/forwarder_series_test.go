package tunnel

import (
	"context"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/connectip/connectiptest"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// sessionPair is a CONNECT-IP client session whose proxy end the test
// plays, and the carrier between them, whose Close is the connection's
// loss.
type sessionPair struct {
	client, proxy *connectip.Session
	carrier       *connectiptest.End
}

func newSessionPair(t testing.TB) sessionPair {
	t.Helper()
	return sessionPairOn(t, func(e *connectiptest.End) connectip.Carrier { return e })
}

// sessionPairOn is newSessionPair with the proxy on the carrier that
// proxyCarrier makes of its end: the client gets 10.8.0.2 and a route to
// everywhere.
func sessionPairOn(t testing.TB, proxyCarrier func(*connectiptest.End) connectip.Carrier) sessionPair {
	t.Helper()
	a, b := connectiptest.Pipe(connectiptest.Config{QueueLen: 1024})
	routes := []connectip.IPRoute{connectip.RouteFromPrefix(netip.MustParsePrefix("0.0.0.0/0"), 0)}
	proxy, err := connectip.NewProxy(proxyCarrier(b), []netip.Prefix{netip.MustParsePrefix("10.8.0.2/32")}, routes, connectip.ProxyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := connectip.NewClient(a, connectip.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); proxy.Close(); client.Close() })
	return sessionPair{client: client, proxy: proxy, carrier: a}
}

// readSeq reads one packet from sess and returns its number.
func readSeq(t *testing.T, sess *connectip.Session) uint32 {
	t.Helper()
	buf := make([]byte, 2000)
	n, err := sess.ReadPacket(buf)
	if err != nil {
		t.Fatalf("ReadPacket: %v", err)
	}
	return binary.BigEndian.Uint32(buf[n-4 : n])
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// scriptedNext is a Config.NextSession that reports each loss on lost
// and answers with what the test sends on give.
type scriptedNext struct {
	lost chan error
	give chan Session
	fail chan error
}

func newScriptedNext() *scriptedNext {
	return &scriptedNext{lost: make(chan error, 4), give: make(chan Session), fail: make(chan error)}
}

func (s *scriptedNext) next(ctx context.Context, lost error) (Session, error) {
	s.lost <- lost
	select {
	case sess := <-s.give:
		return sess, nil
	case err := <-s.fail:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestForwarderOutlivesItsSession: the first session's connection is
// lost; what the device gives meanwhile is dropped and counted; the
// second session carries packets both ways through the same device,
// which was never closed; the end of ctx closes the device and the
// session.
func TestForwarderOutlivesItsSession(t *testing.T) {
	for _, batched := range []bool{false, true} {
		name := "one-by-one"
		if batched {
			name = "batches"
		}
		t.Run(name, func(t *testing.T) { testOutlivesSession(t, batched) })
	}
}

func testOutlivesSession(t *testing.T, batched bool) {
	mem := tunneltest.NewDevice(1500)
	var dev Device = mem
	if batched {
		dev = tunneltest.BatchDevice{Device: mem, Batches: make(chan int, 16)}
	}
	first, second := newSessionPair(t), newSessionPair(t)
	sn := newScriptedNext()
	f := New(dev, first.client, Config{WaitWhenFull: true, NextSession: sn.next})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()

	mem.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 200, 1)
	if seq := readSeq(t, first.proxy); seq != 1 {
		t.Fatalf("first session carried packet %d, want 1", seq)
	}
	first.carrier.Close()
	select {
	case lost := <-sn.lost:
		if lost == nil {
			t.Fatal("NextSession learned no reason for the loss")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("NextSession was not asked after the session's loss")
	}
	const whileDown = 5
	for i := range whileDown {
		mem.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 200, uint32(10+i))
	}
	waitFor(t, "the drops while down", func() bool { return f.Stats().DownDrops == whileDown })
	if mem.Closed() {
		t.Fatal("the device was closed with the first session")
	}

	sn.give <- second.client
	waitFor(t, "the second session", func() bool { return f.lanes[0].gate.Load() != nil })
	mem.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 200, 100)
	if seq := readSeq(t, second.proxy); seq != 100 {
		t.Fatalf("second session carried packet %d, want 100", seq)
	}
	if _, err := second.proxy.WritePacket(ipv4Packet("203.0.113.1", "10.8.0.2", 300, 200)); err != nil {
		t.Fatal(err)
	}
	if p := mem.Expect(t); binary.BigEndian.Uint32(p[len(p)-4:]) != 200 {
		t.Fatalf("the device got %x", p)
	}
	// The counters follow the packets' delivery by a moment.
	waitFor(t, "the counters", func() bool {
		st := f.Stats()
		return st.Tunneled.Packets == 2 && st.Delivered.Packets == 1 && st.Sessions[0].Sent.Packets == 1
	})
	if st := f.Stats(); st.SessionsLost != 1 || st.DownDrops != whileDown {
		t.Fatalf("stats %+v", st)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run goes on after ctx ended")
	}
	if !mem.Closed() {
		t.Fatal("the device was left open")
	}
	if _, err := second.client.ReadPacket(make([]byte, 2000)); err == nil {
		t.Fatal("the second session was left open")
	}
}

// TestLostSessionReleasesAWaitingReader: with WaitWhenFull, a reader
// waiting for room in the queue of a session that fails drops instead,
// and keeps reading while no session is up.
func TestLostSessionReleasesAWaitingReader(t *testing.T) {
	sess := &blockedSession{entered: make(chan struct{}, 100), release: make(chan struct{}), closed: make(chan struct{})}
	dev := tunneltest.NewDevice(1500)
	sn := newScriptedNext()
	f := New(dev, sess, Config{QueueLen: 2, WaitWhenFull: true, NextSession: sn.next})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	for i := range 4 {
		dev.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, uint32(i))
	}
	// The sender holds one, the queue two, the reader waits with one.
	waitFor(t, "a full queue", func() bool { return f.Stats().DeviceRead.Packets == 4 })
	sess.Close() // the sender fails with the packet it holds
	<-sn.lost
	for i := range 10 {
		dev.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, uint32(10+i))
	}
	// The queued packets and the waiting one are dropped, unless the
	// waiting one found room left by the drain (it then waits for the
	// next session): the reader goes on either way.
	waitFor(t, "the reader to go on", func() bool {
		st := f.Stats()
		return st.DeviceRead.Packets == 14 && st.DownDrops >= 12
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !dev.Closed() {
		t.Fatal("the device was left open")
	}
}

// TestNextSessionFailureEndsRun: an error from NextSession ends Run with
// it and closes the device; a Forwarder of several sessions refuses
// NextSession.
func TestNextSessionFailureEndsRun(t *testing.T) {
	sess := &blockedSession{entered: make(chan struct{}, 100), release: make(chan struct{}), closed: make(chan struct{})}
	dev := tunneltest.NewDevice(1500)
	sn := newScriptedNext()
	f := New(dev, sess, Config{NextSession: sn.next})
	done := make(chan error, 1)
	go func() { done <- f.Run(context.Background()) }()
	sess.Close()
	<-sn.lost
	giveUp := errors.New("no server")
	sn.fail <- giveUp
	select {
	case err := <-done:
		if !errors.Is(err, giveUp) {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run goes on")
	}
	if !dev.Closed() {
		t.Fatal("the device was left open")
	}
	if _, err := NewMulti(dev, []Session{sess, sess}, Config{NextSession: sn.next}); err == nil {
		t.Fatal("NewMulti took NextSession with two sessions")
	}
}
