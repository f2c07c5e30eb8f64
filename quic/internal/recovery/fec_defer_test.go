package recovery

import (
	"testing"
	"time"
)

// sendSources sends packets 0..9 at 0..9 ms as FEC sources and
// acknowledges all but 2 at 100 ms: the packet threshold declares 2 lost.
func sendSources(t *testing.T, policy FECPolicy) *Sender {
	t.Helper()
	cfg := testConfig(NewReno)
	cfg.FECPolicy = policy
	s := confirmed(t, cfg)
	for pn := range uint64(10) {
		err := s.OnPacketSent(time.Duration(pn)*ms, SentPacket{Space: SpaceApplication, Number: pn, Bytes: 1200, AckEliciting: true, InFlight: true, Source: true})
		if err != nil {
			t.Fatal(err)
		}
	}
	res := ack(t, s, 100*ms, SpaceApplication, 0, rng(3, 9, 0, 1))
	if !equalNumbers(res.Lost, 2) {
		t.Fatalf("lost %v, want [2]", numbers(res.Lost))
	}
	return s
}

// Under FECHide a lost source's signal waits for the FEC report; a report
// in time means no signal at all.
func TestDeferredLossRecovered(t *testing.T) {
	s := sendSources(t, FECHide)
	window := s.CongestionWindow()
	if st := s.Stats(); st.CongestionSignals != 0 || st.LossSignalsDeferred != 1 {
		t.Fatalf("at the loss: %+v", st)
	}
	if _, err := s.OnRecovered(250*ms, SpaceApplication, rng(2, 2)); err != nil {
		t.Fatal(err)
	}
	send(t, s, 300*ms, SpaceApplication, 10)
	ack(t, s, 500*ms, SpaceApplication, 0, rng(3, 10, 0, 1))
	st := s.Stats()
	if st.CongestionSignals != 0 || st.LossSignalsAvoided != 1 || st.RecoveredAfterLoss != 1 || s.CongestionWindow() < window {
		t.Errorf("after the report: window %d from %d, %+v", s.CongestionWindow(), window, st)
	}
}

// Without a report the signal comes once it is due (a PTO period and the
// ack delay after the loss), at the next ACK.
func TestDeferredLossSignals(t *testing.T) {
	s := sendSources(t, FECHide)
	window := s.CongestionWindow()
	send(t, s, 110*ms, SpaceApplication, 10)
	ack(t, s, 150*ms, SpaceApplication, 0, rng(3, 10, 0, 1))
	if st := s.Stats(); st.CongestionSignals != 0 {
		t.Fatalf("signalled before the report was due: %+v", st)
	}
	send(t, s, 600*ms, SpaceApplication, 11)
	ack(t, s, 700*ms, SpaceApplication, 0, rng(3, 11, 0, 1))
	if st := s.Stats(); st.CongestionSignals != 1 || st.LossSignalsAvoided != 0 || s.CongestionWindow() >= window {
		t.Errorf("after the due time: window %d from %d, %+v", s.CongestionWindow(), window, st)
	}
}

// Under FECSignal the loss signals at once, as any loss.
func TestLostSourceSignalPolicy(t *testing.T) {
	s := sendSources(t, FECSignal)
	if st := s.Stats(); st.CongestionSignals != 1 || st.LossSignalsDeferred != 0 {
		t.Errorf("signal policy: %+v", st)
	}
}
