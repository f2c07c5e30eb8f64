package recovery

import (
	"testing"
	"time"
)

// Each lost packet carries the rule that declared it lost: the packet
// threshold on an ACK, the time threshold on an ACK or on the loss timer,
// and the time a FEC repair's hold ran out, even for a packet the packet
// threshold had already condemned.
func TestLossTrigger(t *testing.T) {
	trigger := func(t *testing.T, res *Result, pn uint64) LossTrigger {
		t.Helper()
		if !equalNumbers(res.Lost, pn) {
			t.Fatalf("lost %v, want [%d]", numbers(res.Lost), pn)
		}
		return res.Lost[0].LossTrigger
	}
	t.Run("packet threshold, then loss timer", func(t *testing.T) {
		s := confirmed(t, testConfig(NewReno))
		for pn := range uint64(5) {
			send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
		}
		// Packet 3 acknowledged: 0 is kPacketThreshold below it.
		if got := trigger(t, ack(t, s, 100*ms, SpaceApplication, 0, rng(3, 3)), 0); got != LossReorderingThreshold {
			t.Errorf("packet 0: %v, want reordering_threshold", got)
		}
		// Packet 1 is two below: the loss timer declares it.
		if got := trigger(t, s.OnTimeout(110125*time.Microsecond), 1); got != LossTimeThreshold {
			t.Errorf("packet 1: %v, want time_threshold", got)
		}
	})
	t.Run("time threshold on an ACK", func(t *testing.T) {
		s := confirmed(t, testConfig(NewReno))
		send(t, s, 0, SpaceApplication, 0)
		send(t, s, 200*ms, SpaceApplication, 1)
		if got := trigger(t, ack(t, s, 300*ms, SpaceApplication, 0, rng(1, 1)), 0); got != LossTimeThreshold {
			t.Errorf("%v, want time_threshold", got)
		}
	})
	t.Run("FEC hold ran out", func(t *testing.T) {
		s := fecRun(t, FECSignal, 150*ms)
		if got := trigger(t, s.OnTimeout(150*ms), 2); got != LossTimeThreshold {
			t.Errorf("%v, want time_threshold", got)
		}
	})
	for tr, name := range map[LossTrigger]string{
		LossReorderingThreshold: "reordering_threshold", LossTimeThreshold: "time_threshold", 0: "unknown",
	} {
		if tr.String() != name {
			t.Errorf("%d: %q, want %q", tr, tr.String(), name)
		}
	}
}
