package loss

import (
	"math"
	"testing"
)

// lossRuns returns how many loss runs of each length n packets produced.
func lossRuns(m Model, n int) map[int]int {
	runs := map[int]int{}
	run := 0
	for range n {
		if m.Drop() {
			run++
			continue
		}
		if run > 0 {
			runs[run]++
		}
		run = 0
	}
	return runs
}

// TestGilbertElliottRunLengths checks that with LB=1, LG=0 loss runs are
// geometric with parameter R (mean 1/R) by a chi-square goodness-of-fit
// test over run lengths 1..7 and 8+.
func TestGilbertElliottRunLengths(t *testing.T) {
	const (
		n    = 2_000_000
		bins = 8
		// chi-square 99% critical value with bins-1 = 7 degrees of freedom.
		critical = 18.475
	)
	for _, r := range []float64{1.0 / 3, 0.5, 0.15} {
		for _, seed := range testSeeds[:2] {
			m, err := NewGilbertElliott(GEParams{P: 0.01, R: r, LossBad: 1}, seed)
			if err != nil {
				t.Fatal(err)
			}
			runs := lossRuns(m, n)
			total, sum := 0, 0
			observed := make([]int, bins)
			for length, count := range runs {
				total += count
				sum += length * count
				observed[min(length, bins)-1] += count
			}
			chi2 := 0.0
			for i := range bins {
				expected := float64(total) * math.Pow(1-r, float64(i)) * r
				if i == bins-1 {
					expected = float64(total) * math.Pow(1-r, float64(i))
				}
				d := float64(observed[i]) - expected
				chi2 += d * d / expected
			}
			if chi2 > critical {
				t.Errorf("r=%v seed %d: run lengths %v not geometric (chi2 %.1f > %.1f)", r, seed, observed, chi2, critical)
			}
			mean := float64(sum) / float64(total)
			sd := math.Sqrt((1 - r) / (r * r) / float64(total))
			if math.Abs(mean-1/r) > z99*sd {
				t.Errorf("r=%v seed %d: mean run %.4f, want %.4f +- %.4f", r, seed, mean, 1/r, z99*sd)
			}
		}
	}
}

func TestBurstNeverExceedsMax(t *testing.T) {
	for _, maxBurst := range []int{1, 3, 9} {
		m, err := NewBurst(0.7, maxBurst, 7)
		if err != nil {
			t.Fatal(err)
		}
		runs := lossRuns(m, 200_000)
		for length := range runs {
			if length > maxBurst {
				t.Errorf("burst:0.7,%d: a run of %d losses", maxBurst, length)
			}
		}
		if runs[maxBurst] == 0 {
			t.Errorf("burst:0.7,%d: no run reached the cap: %v", maxBurst, runs)
		}
	}
}
