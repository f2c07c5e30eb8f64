package recovery

import "testing"

// A response that fills the window right after an idle moment grows it:
// the packets are marked application limited for the rate sampler (sent
// before the data in flight at the idle moment was delivered), but the
// window was in use (RFC 9002 section 7.8 asks for growth to stop only
// while it is not). Without this, each response after an idle period
// lost a round trip of slow start.
func TestAppLimitedMarkWithFullWindow(t *testing.T) {
	for _, alg := range []Algorithm{NewReno, CUBIC} {
		s := confirmed(t, testConfig(alg))
		send(t, s, 0, SpaceApplication, 0)
		s.SetAppLimited()     // nothing more to send: packet 0 is in flight
		sendN(t, s, ms, 1, 9) // the response fills the 12,000-byte window
		ack(t, s, 100*ms, SpaceApplication, 0, rng(0, 9))
		wantWindow(t, s, 24000, InfiniteSSThresh, PhaseSlowStart)
	}
}

// A window in slow start used less than half does not grow on packets
// sent while application limited, and a full one grows on them.
func TestWindowUseSlowStart(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	s.SetAppLimited()
	sendN(t, s, 0, 0, 4) // 4,800 bytes in a 12,000-byte window
	ack(t, s, 100*ms, SpaceApplication, 0, rng(0, 3))
	wantWindow(t, s, 12000, InfiniteSSThresh, PhaseApplicationLimited)
	s.SetAppLimited()
	sendN(t, s, 100*ms, 4, 5) // 6,000 bytes: half the window
	ack(t, s, 200*ms, SpaceApplication, 0, rng(4, 8))
	wantWindow(t, s, 18000, InfiniteSSThresh, PhaseSlowStart)
}

func TestWindowUseRounds(t *testing.T) {
	var u windowUse
	u.onSent(10000)
	if !u.used(20000, 1200, true) || u.used(20000, 1200, false) {
		t.Fatal("half a window is used in slow start only")
	}
	u.onSent(17000)
	if !u.used(20000, 1200, false) {
		t.Fatal("within three packets of the window is used in congestion avoidance")
	}
	// Two rounds later the peak is forgotten.
	u.onAck(100*ms, 50*ms)
	if !u.used(20000, 1200, false) {
		t.Fatal("the previous round's peak counts")
	}
	u.onSent(1200)
	u.onAck(200*ms, 150*ms)
	if u.used(20000, 1200, true) {
		t.Fatal("a peak two rounds old still counts")
	}
}
