package fecsim

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// Point is one loss condition of a sweep.
type Point struct {
	// Name is a short label ("uniform 0.5%", "ge p=0.0015 r=0.33").
	Name string `json:"name"`
	// Loss is the netsim/loss spec.
	Loss string `json:"loss"`
	// X is the point's coordinate on a figure's x axis: the loss rate for
	// the uniform sweep, the point's index otherwise.
	X float64 `json:"x"`
}

// The three sweeps of HIRT's section VIII.

// UniformPoints is figure 10's sweep: uniform loss 0, 0.5%, ..., 5%.
func UniformPoints() []Point {
	pts := make([]Point, 0, 11)
	for i := range 11 {
		p := float64(i) * 0.005
		pts = append(pts, Point{Name: fmt.Sprintf("uniform %.1f%%", p*100), Loss: fmt.Sprintf("uniform:%g", p), X: p})
	}
	return pts
}

// GE sweep ranges (figure 11a).
const (
	GEMinP, GEMaxP = 0.0001, 0.01
	GEMinR, GEMaxR = 0.1, 0.5
)

// GEPoints is figure 11a's space-filling design: n Gilbert-Elliott points,
// p in [GEMinP, GEMaxP] and r in [GEMinR, GEMaxR], placed by the 2-D
// Halton sequence (bases 2 and 3, starting at index 1). Like the paper's
// design, it is linear in p and r, so most points have a mean loss p/(p+r)
// between 0.5% and 5%.
func GEPoints(n int) []Point {
	pts := make([]Point, 0, n)
	for i := 1; i <= n; i++ {
		p := GEMinP + halton(i, 2)*(GEMaxP-GEMinP)
		r := GEMinR + halton(i, 3)*(GEMaxR-GEMinR)
		pts = append(pts, Point{
			Name: fmt.Sprintf("ge p=%.5f r=%.3f", p, r),
			Loss: fmt.Sprintf("ge:%.6f,%.6f", p, r),
			X:    float64(i),
		})
	}
	return pts
}

// halton is the i-th element of the van der Corput sequence in base b,
// the coordinate of the Halton sequence that uses b.
func halton(i, b int) float64 {
	v, f := 0.0, 1.0
	for ; i > 0; i /= b {
		f /= float64(b)
		v += f * float64(i%b)
	}
	return v
}

// Starlink fit of HIRT's figure 11b: Gilbert-Elliott with p = 0.00151,
// r = 1/3 (mean loss 0.45%, mean burst 3).
const StarlinkLoss = "ge:0.00151,0.333333"

// StarlinkPoints is figure 11b's single point.
func StarlinkPoints() []Point {
	return []Point{{Name: "starlink", Loss: StarlinkLoss, X: 0}}
}

// SweepConfig describes a sweep: every scheme at every point.
type SweepConfig struct {
	Schemes []SchemeConfig
	Points  []Point
	// Packets, RTTPackets, payload sizes, Warmup and Drain are as in
	// RunConfig.
	Packets, RTTPackets    int
	MinPayload, MaxPayload int
	Warmup, Drain          int
	// Seed seeds the sweep: point i runs with seed Seed+i, the same for
	// every scheme.
	Seed uint64
	// Workers is the number of runs at once; 0 means GOMAXPROCS.
	Workers int
	// Progress, if set, is called after each run with the number of runs
	// done and the total, from one goroutine at a time.
	Progress func(done, total int)
}

// PointResult is every scheme's result at one point, in the order of
// SweepConfig.Schemes.
type PointResult struct {
	Point   Point    `json:"point"`
	Results []Result `json:"results"`
}

// Sweep runs every scheme at every point, in parallel. The results do not
// depend on the number of workers (decode times aside).
func Sweep(cfg SweepConfig) ([]PointResult, error) {
	if len(cfg.Schemes) == 0 || len(cfg.Points) == 0 {
		return nil, errors.New("fecsim: a sweep needs at least one scheme and one point")
	}
	for _, s := range cfg.Schemes {
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("fecsim: scheme %s: %w", s.Name, err)
		}
	}
	out := make([]PointResult, len(cfg.Points))
	for i, p := range cfg.Points {
		out[i] = PointResult{Point: p, Results: make([]Result, len(cfg.Schemes))}
	}
	total := len(cfg.Points) * len(cfg.Schemes)
	errs := make([]error, total)
	jobs := make(chan int)
	done := make(chan struct{})
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	for range min(workers, total) {
		wg.Go(func() {
			for j := range jobs {
				pi, si := j/len(cfg.Schemes), j%len(cfg.Schemes)
				out[pi].Results[si], errs[j] = Run(cfg.runConfig(pi, si))
				done <- struct{}{}
			}
		})
	}
	go func() {
		for j := range total {
			jobs <- j
		}
		close(jobs)
	}()
	for n := 1; n <= total; n++ {
		<-done
		if cfg.Progress != nil {
			cfg.Progress(n, total)
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// runConfig is the run of scheme si at point pi.
func (c SweepConfig) runConfig(pi, si int) RunConfig {
	return RunConfig{
		Scheme:     c.Schemes[si],
		Loss:       c.Points[pi].Loss,
		Packets:    c.Packets,
		Seed:       c.Seed + uint64(pi),
		RTTPackets: c.RTTPackets,
		MinPayload: c.MinPayload,
		MaxPayload: c.MaxPayload,
		Warmup:     c.Warmup,
		Drain:      c.Drain,
	}
}
