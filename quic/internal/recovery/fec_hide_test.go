package recovery

import (
	"testing"
	"time"
)

// A lost repair packet is no congestion signal under FECHide and a loss
// like any other under FECSignal.
func TestLostRepairPolicies(t *testing.T) {
	for _, policy := range []FECPolicy{FECHide, FECSignal} {
		cfg := testConfig(NewReno)
		cfg.FECPolicy = policy
		s := confirmed(t, cfg)
		if err := s.OnPacketSent(0, SentPacket{Space: SpaceApplication, Number: 0, Bytes: 1452, AckEliciting: true, InFlight: true, Repair: true}); err != nil {
			t.Fatal(err)
		}
		for pn := uint64(1); pn <= 4; pn++ {
			send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
		}
		window := s.CongestionWindow()
		res := ack(t, s, 100*ms, SpaceApplication, 0, rng(1, 4))
		hidden := policy == FECHide
		if !equalNumbers(res.Lost, 0) || res.Lost[0].HiddenRepair != hidden {
			t.Fatalf("%v: lost %+v", policy, res.Lost)
		}
		if s.BytesInFlight() != 0 {
			t.Errorf("%v: %d bytes in flight after everything resolved", policy, s.BytesInFlight())
		}
		signals := s.Stats().CongestionSignals
		if hidden && (signals != 0 || s.CongestionWindow() < window) {
			t.Errorf("hide: %d congestion signals, window %d from %d", signals, s.CongestionWindow(), window)
		}
		if !hidden && (signals != 1 || s.CongestionWindow() >= window) {
			t.Errorf("signal: %d congestion signals, window %d from %d", signals, s.CongestionWindow(), window)
		}
	}
}

// Repairs lost under FECHide do not establish persistent congestion (RFC
// 9002 section 7.6.2): only ack-eliciting packets whose loss signals do.
func TestLostRepairsNotPersistentCongestion(t *testing.T) {
	cfg := testConfig(NewReno)
	cfg.FECPolicy = FECHide
	s := confirmed(t, cfg)
	send(t, s, 0, SpaceApplication, 0)
	ack(t, s, 100*ms, SpaceApplication, 0, rng(0, 0))
	for pn := uint64(1); pn <= 3; pn++ {
		at := 100*ms + time.Duration(pn)*time.Second
		if err := s.OnPacketSent(at, SentPacket{Space: SpaceApplication, Number: pn, Bytes: 1452, AckEliciting: true, InFlight: true, Repair: true}); err != nil {
			t.Fatal(err)
		}
	}
	for pn := uint64(4); pn <= 6; pn++ {
		send(t, s, 4*time.Second, SpaceApplication, pn)
	}
	res := ack(t, s, 4*time.Second+100*ms, SpaceApplication, 0, rng(4, 6))
	if !equalNumbers(res.Lost, 1, 2, 3) || res.PersistentCongestion {
		t.Fatalf("lost %v, persistent congestion %v", numbers(res.Lost), res.PersistentCongestion)
	}
	if st := s.Stats(); st.CongestionSignals != 0 || st.PersistentCongestions != 0 {
		t.Errorf("stats %+v", st)
	}
}
