package recovery

import (
	"testing"
	"time"
)

// A packet the peer rebuilt with FEC is delivered for BBR's rate samples
// under either policy; under FECSignal it also counts as lost (the round's
// losses and the sampler's lost bytes, which the 2% loss rate reads),
// under FECHide it does not.
func TestBBRRebuiltPacketDelivered(t *testing.T) {
	for _, tc := range []struct {
		policy FECPolicy
		lost   int64
	}{{FECSignal, 1200}, {FECHide, 0}} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			cfg := testConfig(BBR)
			cfg.FECPolicy = tc.policy
			s := confirmed(t, cfg)
			for pn := range uint64(10) {
				send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
			}
			if err := s.CoverPacket(SpaceApplication, 2, 150*ms); err != nil {
				t.Fatal(err)
			}
			ack(t, s, 100*ms, SpaceApplication, 0, rng(3, 9, 0, 1))
			b := s.cc.(*bbr)
			if b.delivered != 9*1200 {
				t.Fatalf("delivered %d after the ACK, want %d", b.delivered, 9*1200)
			}
			if _, err := s.OnRecovered(120*ms, SpaceApplication, rng(2, 2)); err != nil {
				t.Fatal(err)
			}
			if b.delivered != 10*1200 {
				t.Errorf("delivered %d after the rebuild, want %d", b.delivered, 10*1200)
			}
			if b.round.lostBytes != tc.lost || s.rate.lost != tc.lost {
				t.Errorf("round losses %d, sampler's lost bytes %d; want %d", b.round.lostBytes, s.rate.lost, tc.lost)
			}
			if s.BytesInFlight() != 0 {
				t.Errorf("%d bytes in flight", s.BytesInFlight())
			}
		})
	}
}

// The Sender runs BBR when the configuration says so; its state names the
// algorithm and BBR's state.
func TestBBRConfigured(t *testing.T) {
	s := confirmed(t, testConfig(BBR))
	st := s.ControllerState()
	if st.Algorithm != BBR || st.Algorithm.String() != "bbr" || st.BBR.State != BBRStartup || st.Phase != PhaseSlowStart {
		t.Fatalf("state %+v", st)
	}
	if st.BBR.InflightHi != -1 || st.BBR.InflightLo != -1 || st.Window != 12000 {
		t.Fatalf("state %+v", st)
	}
	if got := DefaultConfig().BBR; got.LossThresh != 0.02 || got.Beta != 0.7 || got.ProbeRTTInterval != 5*time.Second ||
		got.MinRTTFilterLen != 10*time.Second || got.StartupPacingGain != 2.77 || got.PacingMargin != 0.01 {
		t.Fatalf("defaults %+v", got)
	}
	cubic := confirmed(t, testConfig(CUBIC)).ControllerState()
	if cubic.BBR.State != BBRNone || cubic.BBR.State.String() != "none" {
		t.Fatalf("CUBIC's BBR state %v", cubic.BBR.State)
	}
	names := map[BBRState]string{BBRStartup: "startup", BBRDrain: "drain", BBRProbeBWDown: "probe_bw_down",
		BBRProbeBWCruise: "probe_bw_cruise", BBRProbeBWRefill: "probe_bw_refill", BBRProbeBWUp: "probe_bw_up",
		BBRProbeRTT: "probe_rtt", BBRState(99): "invalid"}
	for st, name := range names {
		if st.String() != name {
			t.Errorf("%d is %q, want %q", st, st.String(), name)
		}
	}
}

// A BBR configuration out of range is refused with a reason.
func TestBBRConfigInvalid(t *testing.T) {
	for _, mutate := range []func(*BBRConfig){
		func(b *BBRConfig) { b.LossThresh = 1.5 },
		func(b *BBRConfig) { b.DrainPacingGain = 1 },
		func(b *BBRConfig) { b.StartupPacingGain = 0.5 },
		func(b *BBRConfig) { b.MinPipeCwndPackets = -1 },
		func(b *BBRConfig) { b.ProbeRTTDuration = -time.Second },
		func(b *BBRConfig) { b.Beta = 1 },
		func(b *BBRConfig) { b.FullBwThresh = 1 },
		func(b *BBRConfig) { b.ProbeRTTSlack = 1 },
	} {
		cfg := DefaultConfig()
		cfg.Algorithm = BBR
		mutate(&cfg.BBR)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v accepted", cfg.BBR)
		}
		cfg.Algorithm = CUBIC
		if err := cfg.Validate(); err != nil {
			t.Errorf("CUBIC refused for BBR's fields: %v", err)
		}
	}
}
