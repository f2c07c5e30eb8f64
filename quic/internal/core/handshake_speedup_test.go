package core

import (
	"testing"
	"time"
)

// TestRepeatedCryptoResendsEarly: a server that hears nothing from the
// client after its first flight retransmits its handshake flight; the
// client, which has its Finished unacknowledged, sends it again on each
// retransmission it receives (RFC 9002 section 6.2.3), up to the bound,
// besides its own probes. A clean handshake resends nothing early.
func TestRepeatedCryptoResendsEarly(t *testing.T) {
	ccfg, scfg := testConfigs(t, 31)
	p := newPair(t, ccfg, scfg, 15*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	if p.client.speedup.resends != 0 || p.server.speedup.resends != 0 {
		t.Errorf("clean handshake: %d early resends by the client, %d by the server", p.client.speedup.resends, p.server.speedup.resends)
	}

	ccfg, scfg = testConfigs(t, 32)
	p = newPair(t, ccfg, scfg, 15*time.Millisecond)
	// The server gets the client's first flight (two datagrams), then
	// nothing: its probes carry its handshake data again and again.
	p.drop = func(toServer bool, n int, _ []byte) bool { return toServer && n >= 2 }
	resends := 0
	var at []time.Duration
	p.clientApp = func(now time.Duration, c *Conn) {
		if c.speedup.resends != resends {
			resends = c.speedup.resends
			at = append(at, p.now)
		}
	}
	_ = p.run(func() bool { return false }, 8*time.Second)
	if !p.client.handshakeComplete {
		t.Fatal("the client did not complete its handshake")
	}
	if resends == 0 || resends > maxEarlyCryptoResends {
		t.Fatalf("%d early resends, want 1 to %d", resends, maxEarlyCryptoResends)
	}
	t.Logf("early resends at %v; client PTOs %d", at, p.client.Stats().Recovery.PTOs)

	// Once the path heals, the client's next resend completes the
	// handshake.
	p.drop = nil
	p.mustRun(p.confirmed, p.now+30*time.Second)
}

// TestRepeatedClientHelloResendsServerFlight: when the server's first
// flight is lost, the client's probe repeats its ClientHello, and the
// server answers it with its flight at once rather than at its own probe
// timeout; the client, whose ClientHello the server evidently has, never
// resends it early.
func TestRepeatedClientHelloResendsServerFlight(t *testing.T) {
	ccfg, scfg := testConfigs(t, 33)
	p := newPair(t, ccfg, scfg, 15*time.Millisecond)
	p.drop = func(toServer bool, n int, _ []byte) bool { return !toServer && n < 3 }
	p.mustRun(p.confirmed, 10*time.Second)
	if p.server.speedup.resends == 0 {
		t.Error("the server did not answer the repeated ClientHello with its flight")
	}
	if p.client.speedup.resends != 0 {
		t.Errorf("the client resent early %d times", p.client.speedup.resends)
	}
}
