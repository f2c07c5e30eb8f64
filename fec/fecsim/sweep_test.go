package fecsim

import (
	"fmt"
	"math"
	"testing"
)

func TestHaltonSequence(t *testing.T) {
	base2 := []float64{0.5, 0.25, 0.75, 0.125, 0.625}
	base3 := []float64{1.0 / 3, 2.0 / 3, 1.0 / 9, 4.0 / 9, 7.0 / 9}
	for i := range base2 {
		if got := halton(i+1, 2); math.Abs(got-base2[i]) > 1e-15 {
			t.Errorf("halton(%d, 2) = %v, want %v", i+1, got, base2[i])
		}
		if got := halton(i+1, 3); math.Abs(got-base3[i]) > 1e-15 {
			t.Errorf("halton(%d, 3) = %v, want %v", i+1, got, base3[i])
		}
	}
}

func TestSweepPoints(t *testing.T) {
	u := UniformPoints()
	if len(u) != 11 || u[0].Loss != "uniform:0" || u[1].Loss != "uniform:0.005" || u[10].X != 0.05 {
		t.Errorf("uniform points %+v", u)
	}
	ge := GEPoints(100)
	seen := map[string]bool{}
	lowP, lowR := 0, 0
	for _, p := range ge {
		var pp, rr float64
		if _, err := fmt.Sscanf(p.Loss, "ge:%g,%g", &pp, &rr); err != nil {
			t.Fatalf("point %q: %v", p.Loss, err)
		}
		if pp < GEMinP || pp > GEMaxP || rr < GEMinR || rr > GEMaxR || seen[p.Loss] {
			t.Errorf("point %q outside the design or repeated", p.Loss)
		}
		seen[p.Loss] = true
		if pp < (GEMinP+GEMaxP)/2 {
			lowP++
		}
		if rr < (GEMinR+GEMaxR)/2 {
			lowR++
		}
	}
	// A space-filling design puts half the points in each half of each
	// range (Halton: within two).
	if lowP < 48 || lowP > 52 || lowR < 48 || lowR > 52 {
		t.Errorf("%d points in the lower half of p, %d of r; want about 50 each", lowP, lowR)
	}
	if s := StarlinkPoints(); len(s) != 1 || s[0].Loss != StarlinkLoss {
		t.Errorf("starlink points %+v", s)
	}
}

func TestSweepDoesNotDependOnWorkers(t *testing.T) {
	cfg := SweepConfig{
		Schemes: []SchemeConfig{{Name: RLCAdaptive}, {Name: Maelstrom}},
		Points:  GEPoints(3), Packets: 2000, Seed: 9,
	}
	var progress []int
	cfg.Workers = 1
	cfg.Progress = func(done, total int) {
		if total != 6 {
			t.Errorf("progress total %d, want 6", total)
		}
		progress = append(progress, done)
	}
	one, err := Sweep(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(progress) != 6 || progress[5] != 6 {
		t.Errorf("progress calls %v", progress)
	}
	cfg.Workers, cfg.Progress = 3, nil
	three, err := Sweep(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for pi := range one {
		for si := range one[pi].Results {
			a, b := withoutTiming(one[pi].Results[si]), withoutTiming(three[pi].Results[si])
			if a != b {
				t.Errorf("point %d scheme %d differs with 1 and 3 workers:\n%+v\n%+v", pi, si, a, b)
			}
			if a.Seed != 9+uint64(pi) || a.Scheme != cfg.Schemes[si].Name {
				t.Errorf("point %d scheme %d: seed %d scheme %s", pi, si, a.Seed, a.Scheme)
			}
		}
	}
}

func TestSweepRejectsBadConfig(t *testing.T) {
	if _, err := Sweep(SweepConfig{Points: UniformPoints()}); err == nil {
		t.Error("sweep without schemes accepted")
	}
	if _, err := Sweep(SweepConfig{Schemes: []SchemeConfig{{Name: "nope"}}, Points: UniformPoints()}); err == nil {
		t.Error("sweep with an unknown scheme accepted")
	}
	if _, err := Sweep(SweepConfig{Schemes: []SchemeConfig{{Name: XOR}}, Points: []Point{{Loss: "ge:2,1"}}}); err == nil {
		t.Error("sweep with a bad loss spec accepted")
	}
}

func TestSummarize(t *testing.T) {
	mk := func(ovh, rec float64) Result {
		return Result{Scheme: XOR, Label: "XOR k=10", Overhead: ovh, RecoveredRatio: rec, RecoveryDelayP99: ovh * 100, Mismatches: 1}
	}
	points := []PointResult{
		{Results: []Result{mk(0.1, 0.5)}},
		{Results: []Result{mk(0.3, 0.96)}},
		{Results: []Result{mk(0.2, 1)}},
		{Results: []Result{mk(0.4, 0.95)}},
	}
	got := Summarize(points)
	want := Summary{
		Scheme: XOR, Label: "XOR k=10", Runs: 4, MedianOverhead: 0.25, MeanOverhead: 0.25,
		MedianRecovered: 0.955, MeanRecovered: 0.8525, MinRecovered: 0.5, RunsRecovered: 3,
		MedianDelayP99: 25, Mismatches: 4,
	}
	if len(got) != 1 {
		t.Fatalf("%d summaries", len(got))
	}
	g := got[0]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if g.Scheme != want.Scheme || g.Runs != 4 || g.RunsRecovered != 3 || g.Mismatches != 4 ||
		!near(g.MedianOverhead, want.MedianOverhead) || !near(g.MeanOverhead, want.MeanOverhead) ||
		!near(g.MedianRecovered, want.MedianRecovered) || !near(g.MeanRecovered, want.MeanRecovered) ||
		!near(g.MinRecovered, want.MinRecovered) || !near(g.MedianDelayP99, want.MedianDelayP99) {
		t.Errorf("summary %+v, want %+v", g, want)
	}
	if Summarize(nil) != nil {
		t.Error("summary of nothing is not nil")
	}
}
