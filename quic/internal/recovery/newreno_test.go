package recovery

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

func sendN(t *testing.T, s *Sender, now time.Duration, from, n uint64) {
	t.Helper()
	for pn := from; pn < from+n; pn++ {
		send(t, s, now, SpaceApplication, pn)
	}
}

func wantWindow(t *testing.T, s *Sender, cwnd, ssthresh int, phase Phase) {
	t.Helper()
	st := s.ControllerState()
	if st.Window != cwnd || st.SSThresh != ssthresh || st.Phase != phase {
		t.Fatalf("window %d ssthresh %d phase %v; want %d %d %v", st.Window, st.SSThresh, st.Phase, cwnd, ssthresh, phase)
	}
}

// NewReno across a recovery period (RFC 9002 sections 7.3 and appendix B):
// slow start doubles per round trip, the first loss halves the window, the
// other losses of the same flight do not, packets sent before the period
// do not grow the window, a packet sent after it ends the period, then the
// window grows by one datagram per window acknowledged.
func TestNewRenoRecoveryPeriod(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	const inf = InfiniteSSThresh
	wantWindow(t, s, 12000, inf, PhaseSlowStart)

	sendN(t, s, 0, 0, 10)
	ack(t, s, 100*ms, SpaceApplication, 0, rng(0, 9))
	wantWindow(t, s, 24000, inf, PhaseSlowStart)

	// Flight of 20; packets 10 and 20 are lost.
	sendN(t, s, 100*ms, 10, 20)
	res := ack(t, s, 200*ms, SpaceApplication, 0, rng(11, 19))
	if !equalNumbers(res.Lost, 10) {
		t.Fatalf("lost %v", numbers(res.Lost))
	}
	wantWindow(t, s, 12000, 12000, PhaseRecovery)
	res = ack(t, s, 201*ms, SpaceApplication, 0, rng(21, 29, 11, 19))
	if !equalNumbers(res.Lost, 20) {
		t.Fatalf("lost %v", numbers(res.Lost))
	}
	// Same flight, sent before the period began: no second reduction,
	// and the acknowledgements do not grow the window.
	wantWindow(t, s, 12000, 12000, PhaseRecovery)
	if st := s.ControllerState(); st.Reductions != 1 || st.RecoveryStart != 200*ms {
		t.Fatalf("reductions %d start %v", st.Reductions, st.RecoveryStart)
	}

	// A packet sent after the period began ends it: congestion avoidance,
	// +1200 bytes per 12000 acknowledged.
	sendN(t, s, 202*ms, 30, 10)
	ack(t, s, 300*ms, SpaceApplication, 0, rng(21, 38, 11, 19))
	wantWindow(t, s, 12000, 12000, PhaseCongestionAvoidance)
	ack(t, s, 301*ms, SpaceApplication, 0, rng(21, 39, 11, 19))
	wantWindow(t, s, 13200, 12000, PhaseCongestionAvoidance)
	sendN(t, s, 301*ms, 40, 11)
	ack(t, s, 400*ms, SpaceApplication, 0, rng(21, 50, 11, 19))
	wantWindow(t, s, 14400, 12000, PhaseCongestionAvoidance)

	// A loss in a later round trip reduces again.
	sendN(t, s, 400*ms, 51, 12)
	ack(t, s, 500*ms, SpaceApplication, 0, rng(52, 62, 21, 50, 11, 19))
	wantWindow(t, s, 7200, 7200, PhaseRecovery)
	if st := s.ControllerState(); st.Reductions != 2 {
		t.Fatalf("reductions %d, want 2", st.Reductions)
	}
}

// ECN-CE increases are congestion signals, one reduction per period
// (RFC 9002 appendix B.7).
func TestNewRenoECN(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	sendN(t, s, 0, 0, 10)
	ce := func(now time.Duration, largest, n uint64) {
		t.Helper()
		_, err := s.OnAck(now, SpaceApplication, &Ack{Ranges: rng(0, largest), ECN: &wire.ECNCounts{ECT0: largest + 1 - n, CE: n}})
		if err != nil {
			t.Fatal(err)
		}
	}
	ce(100*ms, 4, 1)
	wantWindow(t, s, 6000, 6000, PhaseRecovery)
	// Same count, then a larger count for packets sent before the period.
	ce(101*ms, 6, 1)
	ce(102*ms, 9, 2)
	wantWindow(t, s, 6000, 6000, PhaseRecovery)
	if st := s.Stats(); st.ECNCEIncreases != 2 || st.CongestionSignals != 2 {
		t.Fatalf("stats %+v", st)
	}
}

// Packets sent while application limited do not grow the window (RFC
// 9002 section 7.8).
func TestNewRenoAppLimited(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	s.SetAppLimited()
	sendN(t, s, 0, 0, 2)
	ack(t, s, 100*ms, SpaceApplication, 0, rng(0, 1))
	wantWindow(t, s, 12000, InfiniteSSThresh, PhaseApplicationLimited)
	sendN(t, s, 100*ms, 2, 10)
	ack(t, s, 200*ms, SpaceApplication, 0, rng(0, 11))
	wantWindow(t, s, 24000, InfiniteSSThresh, PhaseSlowStart)
}
