package fecsim

import (
	"testing"
)

// These tests hold the controllers to their published numbers and
// satquic's targets, on fewer packets than `satquic sim` uses but enough
// for the assertions to mean something; each can fail.

func runOne(t *testing.T, cfg RunConfig) Result {
	t.Helper()
	r, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mismatches != 0 || r.DecodeErrors != 0 {
		t.Fatalf("%s over %s: %d mismatches, %d decode errors", r.Label, r.Loss, r.Mismatches, r.DecodeErrors)
	}
	return r
}

func TestAdaptiveMeetsItsTargets(t *testing.T) {
	const seed = 1
	u := runOne(t, RunConfig{Scheme: SchemeConfig{Name: RLCAdaptive}, Loss: "uniform:0.005", Packets: 50_000, Seed: seed})
	if u.RecoveredRatio < 0.999 || u.Overhead > 0.025 {
		t.Errorf("uniform 0.5%% (seed %d): recovered %.4f at overhead %.4f, want >= 0.999 at <= 0.025", seed, u.RecoveredRatio, u.Overhead)
	}
	s := runOne(t, RunConfig{Scheme: SchemeConfig{Name: RLCAdaptive}, Loss: StarlinkLoss, Packets: 50_000, Seed: seed})
	if s.RecoveredRatio < 0.99 || s.Overhead > 0.08 {
		t.Errorf("Starlink fit (seed %d): recovered %.4f at overhead %.4f, want >= 0.99 at <= 0.08", seed, s.RecoveredRatio, s.Overhead)
	}
	// The GE design, on its first 40 points: at least 95% of the runs
	// recover 95% of their losses, at a median overhead no higher than
	// HIRT's in the same runs.
	res, err := Sweep(SweepConfig{
		Schemes: []SchemeConfig{{Name: RLCAdaptive}, {Name: RLCHIRT}},
		Points:  GEPoints(40), Packets: 8000, Warmup: 2000, Seed: seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	sums := Summarize(res)
	adaptive, hirt := sums[0], sums[1]
	if adaptive.RunsRecovered < 38 || adaptive.MedianOverhead > hirt.MedianOverhead || adaptive.Mismatches+adaptive.DecodeErrors != 0 {
		t.Errorf("GE design (seed %d): adaptive recovered 95%% in %d/40 runs at median overhead %.4f (HIRT: %d/40 at %.4f); want >= 38 at no more than HIRT",
			seed, adaptive.RunsRecovered, adaptive.MedianOverhead, hirt.RunsRecovered, hirt.MedianOverhead)
	}
}

// TestHIRTReproducesThePaper checks the HIRT controller against the
// HIRT paper's simulation (section VIII, figures 10 and 11: n = 100,000,
// w = 200, a = 0.9) as reproduced by this package, within the noise of one
// seed.
func TestHIRTReproducesThePaper(t *testing.T) {
	cases := []struct {
		loss            string
		beta            float64
		window          int
		minOvh, maxOvh  float64
		minRec, maxRec  float64
		publishedOvhRec string
	}{
		{"uniform:0.005", 3, 200, 0.033, 0.041, 0.998, 1, "3.68% / 100%"},
		{"uniform:0.03", 2, 200, 0.075, 0.090, 0.995, 1, "8.28% / 100%"},
		{"uniform:0.05", 1, 200, 0.050, 0.062, 0.25, 0.80, "5.63% / 67%"},
		{StarlinkLoss, 3, 200, 0.045, 0.065, 0.80, 0.97, "5.4% / 92.6%"},
		{StarlinkLoss, 3, 400, 0.045, 0.065, 0.95, 1, "5.4% / 99.4%"},
	}
	for _, c := range cases {
		r := runOne(t, RunConfig{Scheme: SchemeConfig{Name: RLCHIRT, HIRTBeta: c.beta, Window: c.window}, Loss: c.loss, Packets: 100_000, Seed: 1})
		if r.Overhead < c.minOvh || r.Overhead > c.maxOvh || r.RecoveredRatio < c.minRec || r.RecoveredRatio > c.maxRec {
			t.Errorf("HIRT b=%g w=%d over %s: %.2f%% / %.1f%%, published %s", c.beta, c.window, c.loss, r.Overhead*100, r.RecoveredRatio*100, c.publishedOvhRec)
		}
	}
}

// TestAdaptiveRecoversOnALongRoundTrip: on a GEO path a round trip is
// thousands of packets, beyond what a reaction can reach back to; the
// proactive repairs must then carry the load (the Starlink fit, feedback
// 6000 packets late, measured after the first reports arrived).
func TestAdaptiveRecoversOnALongRoundTrip(t *testing.T) {
	const seed = 1
	r := runOne(t, RunConfig{Scheme: SchemeConfig{Name: RLCAdaptive}, Loss: StarlinkLoss, Packets: 40_000, Warmup: 15_000, RTTPackets: 6000, Seed: seed})
	if r.RecoveredRatio < 0.99 || r.Overhead > 0.05 {
		t.Errorf("Starlink fit, 6000-packet round trip (seed %d): recovered %.4f at overhead %.4f, want >= 0.99 at <= 0.05", seed, r.RecoveredRatio, r.Overhead)
	}
}
