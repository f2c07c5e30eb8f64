package fecsim

import (
	"errors"
	"testing"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/netsim/loss"
)

// withoutTiming clears the only fields that depend on the clock.
func withoutTiming(r Result) Result {
	r.DecodeNsPerPacket, r.DecodeOutliers = 0, 0
	return r
}

func TestRunIsDeterministic(t *testing.T) {
	for _, name := range SchemeNames {
		cfg := RunConfig{Scheme: SchemeConfig{Name: name}, Loss: "ge:0.005,0.3", Packets: 3000, Seed: 42}
		a, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if withoutTiming(a) != withoutTiming(b) {
			t.Errorf("%s: two runs with seed 42 differ:\n%+v\n%+v", name, a, b)
		}
		if a.Lost == 0 || a.Mismatches != 0 || a.DecodeErrors != 0 {
			t.Errorf("%s: lost %d, mismatches %d, decode errors %d", name, a.Lost, a.Mismatches, a.DecodeErrors)
		}
		cfg.Seed = 43
		c, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if c.Lost == a.Lost && c.RepairsSent == a.RepairsSent {
			t.Errorf("%s: seeds 42 and 43 gave the same losses and repairs", name)
		}
	}
}

func TestRunExactWithDropList(t *testing.T) {
	// rlc-fixed 4:1 over windows of 4 sends s0 s1 s2 s3 R s4 s5 s6 s7 R:
	// packet indices 0-4 and 5-9. Dropping s1 (index 1) costs nothing:
	// the repair at index 4 rebuilds it, 3 packets later. Dropping s5 and
	// s6 (indices 6, 7) loses both: one repair cannot rebuild two.
	cfg := RunConfig{
		Scheme: SchemeConfig{Name: RLCFixed, FixedSources: 4, FixedRepairs: 1, Window: 4},
		Loss:   "drop:1,6,7", Packets: 8, Drain: -1, Seed: 7,
	}
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		Scheme: RLCFixed, Label: "RLC 4:1 w=4", Loss: r.Loss, Packets: 8, Seed: 7, RTTPackets: DefaultRTTPackets,
		Overhead: 0.25, RecoveredRatio: 1.0 / 3, ResidualLoss: 0.25, RecoveryDelayP50: 3, RecoveryDelayP99: 3,
		ChannelLoss: 0.3, SourcesSent: 8, RepairsSent: 2, Lost: 3, Recovered: 1,
	}
	if got := withoutTiming(r); got != want {
		t.Errorf("drop:1,6,7 gave\n%+v\nwant\n%+v", got, want)
	}
	// XOR over pairs: s0 s1 P s2 s3 P; dropping s3 (index 4) is repaired
	// by the parity right after it. Nothing lost gives a ratio of 1.
	r, err = Run(RunConfig{Scheme: SchemeConfig{Name: XOR, XORK: 2}, Loss: "drop:4", Packets: 4, Drain: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Lost != 1 || r.Recovered != 1 || r.RecoveryDelayP50 != 1 || r.Overhead != 0.5 {
		t.Errorf("xor k=2 drop:4: %+v", r)
	}
	r, err = Run(RunConfig{Scheme: SchemeConfig{Name: RS}, Loss: "none", Packets: 100})
	if err != nil {
		t.Fatal(err)
	}
	if r.Lost != 0 || r.RecoveredRatio != 1 || r.ResidualLoss != 0 {
		t.Errorf("no loss: %+v", r)
	}
}

func TestRunWarmupIsNotMeasured(t *testing.T) {
	// With a warm-up of 4, the measured sources are ESIs 4..7: the loss of
	// s1 falls in the warm-up, those of s5 and s6 are measured.
	r, err := Run(RunConfig{
		Scheme: SchemeConfig{Name: RLCFixed, FixedSources: 4, FixedRepairs: 1, Window: 4},
		Loss:   "drop:1,6,7", Packets: 4, Warmup: 4, Drain: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Lost != 2 || r.Recovered != 0 || r.ResidualLoss != 0.5 || r.Warmup != 4 {
		t.Errorf("warm-up run: %+v", r)
	}
}

func TestRunFeedbackReachesTheEncoder(t *testing.T) {
	// One loss, then silence: the adaptive controller's loss-run report
	// arrives RTTPackets later and its reaction rebuilds the source.
	for _, rtt := range []int{5, 40} {
		r, err := Run(RunConfig{Scheme: SchemeConfig{Name: RLCAdaptive}, Loss: "drop:10", Packets: 200, RTTPackets: rtt, Drain: -1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Lost != 1 || r.Recovered != 1 || r.FeedbackReports == 0 {
			t.Fatalf("rtt %d: %+v", rtt, r)
		}
		// Either a proactive repair got there first, or the reaction came
		// one round trip after the run ended.
		if r.RecoveryDelayP50 > float64(rtt+3) {
			t.Errorf("rtt %d: recovered after %v packets", rtt, r.RecoveryDelayP50)
		}
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	bad := []RunConfig{
		{Scheme: SchemeConfig{Name: "fountain"}, Loss: "uniform:0.01"},
		{Scheme: SchemeConfig{Name: RLCAdaptive}, Loss: "uniform:2"},
		{Scheme: SchemeConfig{Name: RLCAdaptive}, Loss: "uniform:0.01", Packets: -5},
		{Scheme: SchemeConfig{Name: RLCAdaptive}, Loss: "uniform:0.01", MinPayload: 10, MaxPayload: 5},
		{Scheme: SchemeConfig{Name: RLCAdaptive}, Loss: "uniform:0.01", Warmup: -1},
		{Scheme: SchemeConfig{Name: RS, RSData: 200, RSParity: 100}, Loss: "none"},
		{Scheme: SchemeConfig{Name: Maelstrom, Maelstrom: "1-20"}, Loss: "none"},
		{Scheme: SchemeConfig{Name: RLCFixed, FixedSources: 1, FixedRepairs: -1}, Loss: "none"},
		{Scheme: SchemeConfig{Name: RLCHIRT, HIRTBeta: -3}, Loss: "none"},
	}
	for _, cfg := range bad {
		if _, err := Run(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	if _, err := Run(bad[0]); !errors.Is(err, ErrUnknownScheme) {
		t.Errorf("unknown scheme: %v, want ErrUnknownScheme", err)
	}
}

// lyingDecoder returns a corrupted copy of every source it is given as a
// "recovered" packet, and a made-up recovery for every repair.
type lyingDecoder struct{}

func (lyingDecoder) AddSource(esi uint32, p []byte) []fec.Recovered {
	return []fec.Recovered{{ESI: esi, Data: append([]byte{1}, p...)}}
}

func (lyingDecoder) AddRepair([]byte) ([]fec.Recovered, error) {
	return nil, errors.New("bad repair")
}

type oneRepairEncoder struct{}

func (oneRepairEncoder) AddSource([]byte) [][]byte        { return [][]byte{{0}} }
func (oneRepairEncoder) OnFeedback(fec.Feedback) [][]byte { return nil }

func TestRunCountsMismatchesAndDecodeErrors(t *testing.T) {
	cfg := RunConfig{Packets: 10, Drain: -1}.withDefaults()
	model := mustModel(t, "none")
	s, err := newSimulation(cfg, model, pair{enc: oneRepairEncoder{}, dec: lyingDecoder{}, check: func() error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	r := s.result()
	if r.Mismatches != 10 || r.DecodeErrors != 10 || r.Recovered != 0 {
		t.Errorf("a decoder that lies: %+v, want 10 mismatches and 10 decode errors", r)
	}
}

func mustModel(t *testing.T, spec string) loss.Model {
	t.Helper()
	m, err := loss.Parse(spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
