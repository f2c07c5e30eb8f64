package recovery

import (
	"testing"
	"time"
)

// A lost Handshake packet reduces the window but slow start goes on; a
// lost 1-RTT packet ends it (RFC 9002 section 7.3.2).
func TestHandshakeLossKeepsSlowStart(t *testing.T) {
	for _, alg := range []Algorithm{NewReno, CUBIC} {
		s := newSender(t, testConfig(alg))
		for pn := range uint64(5) {
			send(t, s, time.Duration(pn)*ms, SpaceHandshake, pn)
		}
		window := s.CongestionWindow()
		res := ack(t, s, 100*ms, SpaceHandshake, 0, rng(1, 4))
		if !equalNumbers(res.Lost, 0) {
			t.Fatalf("%v: lost %v", alg, numbers(res.Lost))
		}
		if w := s.CongestionWindow(); w >= window || !s.InSlowStart() {
			t.Errorf("%v: after a handshake loss window %d (from %d), slow start %v", alg, w, window, s.InSlowStart())
		}
		if st := s.ControllerState(); st.SSThresh != InfiniteSSThresh {
			t.Errorf("%v: ssthresh %d after a handshake loss", alg, st.SSThresh)
		}
		// The same loss of 1-RTT packets ends slow start.
		s.ConfirmHandshake(100 * ms)
		for pn := range uint64(5) {
			send(t, s, 200*ms+time.Duration(pn)*ms, SpaceApplication, pn)
		}
		ack(t, s, 300*ms, SpaceApplication, 0, rng(1, 4))
		if s.InSlowStart() {
			t.Errorf("%v: still in slow start after a 1-RTT loss", alg)
		}
	}
}
