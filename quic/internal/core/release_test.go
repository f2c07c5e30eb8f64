package core

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// handshakeGoroutines returns the IDs of the goroutines crypto/tls runs QUIC
// handshakes in. Tests compare sets of IDs rather than counts, because
// handshakes left behind by earlier tests may end at any moment.
func handshakeGoroutines() map[string]bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	ids := make(map[string]bool)
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "created by crypto/tls.(*QUICConn).Start") {
			continue
		}
		header, _, _ := strings.Cut(g, " [")
		ids[strings.TrimPrefix(header, "goroutine ")] = true
	}
	return ids
}

// newHandshakeGoroutines waits up to a few seconds for the handshake
// goroutines not in before to end, and returns how many are left. The wait
// matters: QUICConn.Close returns once the goroutine has signalled its end,
// a moment before the goroutine itself is gone.
func newHandshakeGoroutines(before map[string]bool) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := countNewHandshakeGoroutines(before)
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}

// countNewHandshakeGoroutines counts the handshake goroutines not in before.
func countNewHandshakeGoroutines(before map[string]bool) int {
	n := 0
	for id := range handshakeGoroutines() {
		if !before[id] {
			n++
		}
	}
	return n
}

// TestReleaseMidHandshake: a connection that ends before its handshake
// completes closes its QUICConn when it reaches the closed state, so the
// handshake goroutine of crypto/tls does not outlive it; Release called
// again afterwards (as drivers do) does nothing.
func TestReleaseMidHandshake(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T) []*Conn
	}{
		{"client times out", func(t *testing.T) []*Conn {
			ccfg, _ := testConfigs(t, 70)
			ccfg.HandshakeTimeout = 2 * time.Second
			c, err := NewClientConn(ccfg, 0, serverAddr)
			if err != nil {
				t.Fatal(err)
			}
			for now := time.Duration(0); !c.Closed(); {
				for {
					if _, ok := c.NextDatagram(now, nil); !ok {
						break
					}
				}
				next, ok := c.NextTimer(now)
				if !ok || next > 10*time.Second {
					t.Fatalf("no timer ends the handshake (%v, %v)", next, ok)
				}
				now = max(now, next)
				c.Step(now, nil)
			}
			return []*Conn{c}
		}},
		{"server loses the client", func(t *testing.T) []*Conn {
			ccfg, scfg := testConfigs(t, 71)
			ccfg.HandshakeTimeout, scfg.HandshakeTimeout = 2*time.Second, 2*time.Second
			p := newPair(t, ccfg, scfg, 5*time.Millisecond)
			// Only the client's first datagram arrives.
			p.drop = func(toServer bool, n int, _ []byte) bool { return toServer && n > 0 }
			p.mustRun(func() bool { return p.server != nil && p.server.Closed() && p.client.Closed() }, 10*time.Second)
			if p.server.HandshakeComplete() {
				t.Fatal("the handshake completed")
			}
			return []*Conn{p.client, p.server}
		}},
		{"client closes", func(t *testing.T) []*Conn {
			ccfg, scfg := testConfigs(t, 72)
			p := newPair(t, ccfg, scfg, 5*time.Millisecond)
			p.mustRun(func() bool { return p.server != nil }, time.Second)
			if p.client.HandshakeComplete() {
				t.Fatal("the handshake completed already")
			}
			p.client.Close(p.now, 3, "gone")
			p.mustRun(func() bool { return p.server.Closed() && p.client.Closed() }, 10*time.Second)
			return []*Conn{p.client, p.server}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := handshakeGoroutines()
			conns := tc.run(t)
			if n := newHandshakeGoroutines(before); n != 0 {
				t.Fatalf("%d handshake goroutines outlive the closed connections", n)
			}
			for _, c := range conns {
				c.Release()
				_ = c.ConnectionState()
			}
		})
	}
}

// TestReleaseAbandoned: a driver that gives up on a connection before it
// closes releases it itself.
func TestReleaseAbandoned(t *testing.T) {
	before := handshakeGoroutines()
	ccfg, _ := testConfigs(t, 73)
	c, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	if n := countNewHandshakeGoroutines(before); n != 1 {
		t.Fatalf("%d new handshake goroutines during the handshake, want 1", n)
	}
	c.Release()
	c.Release()
	if n := newHandshakeGoroutines(before); n != 0 {
		t.Fatalf("%d handshake goroutines outlive Release", n)
	}
}
