package recovery

import (
	"errors"
	"testing"
	"time"
)

// fecRun sends packets 0..9 at 0..9 ms, covers packet 2 by a repair
// expected at until, and acknowledges all but 2 at 100 ms. The sample is
// 91 ms, the loss delay 102.375 ms; packet 2 is 7 below the largest, so
// the packet threshold would declare it lost at once.
func fecRun(t *testing.T, policy FECPolicy, until time.Duration) *Sender {
	t.Helper()
	cfg := testConfig(NewReno)
	cfg.FECPolicy = policy
	s := confirmed(t, cfg)
	for pn := range uint64(10) {
		send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
	}
	if err := s.CoverPacket(SpaceApplication, 2, until); err != nil {
		t.Fatal(err)
	}
	res := ack(t, s, 100*ms, SpaceApplication, 0, rng(3, 9, 0, 1))
	if len(res.Lost) != 0 {
		t.Fatalf("lost %v before the repair deadline", numbers(res.Lost))
	}
	if s.Stats().CoveredLossesDelayed != 1 {
		t.Fatalf("delayed %d, want 1", s.Stats().CoveredLossesDelayed)
	}
	return s
}

// A covered packet is not declared lost before its repair deadline, and
// is declared lost at the deadline if the peer does not recover it.
func TestFECCoveredPacketHeld(t *testing.T) {
	s := fecRun(t, FECSignal, 150*ms)
	wantDeadline(t, s, 150*ms)
	if res := s.OnTimeout(149 * ms); len(res.Lost) != 0 {
		t.Fatal("lost before the deadline")
	}
	res := s.OnTimeout(150 * ms)
	if !equalNumbers(res.Lost, 2) {
		t.Fatalf("lost %v at the deadline, want [2]", numbers(res.Lost))
	}
}

// The hold is bounded: FECMaxHold (250 ms) past the time threshold, or the
// smoothed RTT if longer.
func TestFECHoldBounded(t *testing.T) {
	s := fecRun(t, FECSignal, 10*time.Second)
	// 2 ms + 102.375 ms + 250 ms.
	wantDeadline(t, s, 354375*time.Microsecond)
	if res := s.OnTimeout(354375 * time.Microsecond); !equalNumbers(res.Lost, 2) {
		t.Fatalf("lost %v, want [2]", numbers(res.Lost))
	}
}

// On a long path the hold reaches a smoothed RTT past the time threshold:
// a repair's report there takes longer than FECMaxHold to come back, and a
// loss declared before it is a congestion signal for nothing.
func TestFECHoldLongRTT(t *testing.T) {
	cfg := testConfig(NewReno)
	s := confirmed(t, cfg)
	for pn := range uint64(10) {
		send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
	}
	if err := s.CoverPacket(SpaceApplication, 2, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// A 600 ms sample: the loss delay is 675 ms, the hold 600 ms more.
	if res := ack(t, s, 609*ms, SpaceApplication, 0, rng(3, 9, 0, 1)); len(res.Lost) != 0 {
		t.Fatalf("lost %v before the hold ended", numbers(res.Lost))
	}
	end := 2*ms + 675*ms + 600*ms
	wantDeadline(t, s, end)
	if res := s.OnTimeout(end - 1); len(res.Lost) != 0 {
		t.Fatal("lost before the hold ended")
	}
	if res := s.OnTimeout(end); !equalNumbers(res.Lost, 2) {
		t.Fatalf("lost %v at the end of the hold, want [2]", numbers(res.Lost))
	}
}

// A covered packet that no threshold condemns yet is lost at the later of
// the time threshold and the repair deadline.
func TestFECCoverBeforeThreshold(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	send(t, s, 0, SpaceApplication, 0)
	send(t, s, 50*ms, SpaceApplication, 1)
	if err := s.CoverPacket(SpaceApplication, 0, 130*ms); err != nil {
		t.Fatal(err)
	}
	ack(t, s, 100*ms, SpaceApplication, 0, rng(1, 1))
	// Without the cover: lost at 0 + 56.25 ms, already past at 100 ms.
	wantDeadline(t, s, 130*ms)
}

// Packets recovered by the peer are delivered, never retransmitted; under
// FECSignal their loss reduces the window, under FECHide it does not.
func TestFECRecoveredPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy FECPolicy
		window int
	}{
		// 12000 + 9 * 1200 = 22800 after the ACK; signal halves it,
		// hide counts 1200 more bytes delivered in slow start.
		{FECSignal, 11400},
		{FECHide, 24000},
	} {
		s := fecRun(t, tc.policy, 150*ms)
		res, err := s.OnRecovered(120*ms, SpaceApplication, rng(2, 2))
		if err != nil {
			t.Fatal(err)
		}
		if !equalNumbers(res.Recovered, 2) || len(res.Lost) != 0 || res.Recovered[0].Ref != 1002 {
			t.Fatalf("%v: recovered %v lost %v", tc.policy, numbers(res.Recovered), numbers(res.Lost))
		}
		if s.BytesInFlight() != 0 || s.CongestionWindow() != tc.window {
			t.Fatalf("%v: in flight %d window %d, want 0 and %d", tc.policy, s.BytesInFlight(), s.CongestionWindow(), tc.window)
		}
		st := s.Stats()
		if st.PacketsRecovered != 1 || st.PacketsLost != 0 {
			t.Fatalf("%v: stats %+v", tc.policy, st)
		}
		if signals := st.CongestionSignals; (tc.policy == FECSignal) != (signals == 1) {
			t.Fatalf("%v: %d congestion signals", tc.policy, signals)
		}
		// Nothing is left to lose, and an ACK that also covers the
		// recovered packet acknowledges nothing twice.
		wantNoDeadline(t, s)
		if res := ack(t, s, 130*ms, SpaceApplication, 0, rng(0, 9)); len(res.Acked) != 0 || len(res.Lost) != 0 {
			t.Fatalf("%v: acked %v lost %v", tc.policy, numbers(res.Acked), numbers(res.Lost))
		}
	}
}

// A packet already declared lost and then recovered is reported, so that a
// queued retransmission can be dropped, and counted; the window is not
// reduced a second time.
func TestFECRecoveredAfterLoss(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	for pn := range uint64(10) {
		send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
	}
	ack(t, s, 100*ms, SpaceApplication, 0, rng(3, 9, 0, 1))
	w := s.CongestionWindow()
	res, err := s.OnRecovered(110*ms, SpaceApplication, rng(2, 2))
	if err != nil {
		t.Fatal(err)
	}
	if !equalNumbers(res.Recovered, 2) || s.Stats().RecoveredAfterLoss != 1 || s.CongestionWindow() != w {
		t.Fatalf("recovered %v stats %+v window %d (was %d)", numbers(res.Recovered), s.Stats(), s.CongestionWindow(), w)
	}
}

func TestFECErrors(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	send(t, s, 0, SpaceApplication, 0)
	if err := s.CoverPacket(SpaceApplication, 5, time.Second); !errors.Is(err, ErrInvalidPacket) {
		t.Fatalf("cover unsent: %v", err)
	}
	if _, err := s.OnRecovered(ms, SpaceApplication, rng(3, 3)); !errors.Is(err, ErrAckOfUnsentPacket) {
		t.Fatalf("recover unsent: %v", err)
	}
	if err := s.CoverPacket(Space(7), 0, time.Second); !errors.Is(err, ErrInvalidSpace) {
		t.Fatalf("bad space: %v", err)
	}
	ack(t, s, 10*ms, SpaceApplication, 0, rng(0, 0))
	// Covering an acknowledged packet does nothing.
	if err := s.CoverPacket(SpaceApplication, 0, time.Second); err != nil {
		t.Fatal(err)
	}
}
