//go:build linux

package probe

import (
	"math"
	"testing"

	"github.com/satquic/satquic/netsim/loss"
)

// TestRunLengthsMatchTheModel draws from netsim's own loss models and
// checks the analytic run-length distribution and variance factor against
// what the draws show.
func TestRunLengthsMatchTheModel(t *testing.T) {
	for _, spec := range []string{"uniform:0.05", "ge:0.01,0.3", "ge:0.03,0.4,0.95,0.01", "ge:0.00151,0.3333333333333333"} {
		c, ok := modelChain(spec)
		if !ok {
			t.Fatalf("%s: not a Markov model", spec)
		}
		m, err := loss.Parse(spec, 99)
		if err != nil {
			t.Fatal(err)
		}
		const n = 2_000_000
		seen := make([]bool, n)
		lost := 0
		for i := range seen {
			seen[i] = !m.Drop()
			if !seen[i] {
				lost++
			}
		}
		runs := lossRuns(seen)
		total := 0
		for _, k := range runs {
			total += k
		}
		probs, _ := c.runLengths(4)
		for length := 1; length <= 4; length++ {
			got := float64(runs[length]) / float64(total)
			want := probs[length-1]
			sd := math.Sqrt(want * (1 - want) / float64(total))
			if math.Abs(got-want) > 4*sd+1e-9 {
				t.Errorf("%s: P(run=%d) = %.4f, model %.4f (sd %.4f)", spec, length, got, want, sd)
			}
		}
		if rate := float64(lost) / n; math.Abs(rate-c.mean()) > 4*math.Sqrt(c.varianceFactor()*c.mean()*(1-c.mean())/n) {
			t.Errorf("%s: loss %.5f, model %.5f", spec, rate, c.mean())
		}
	}
}

func TestVarianceFactorOfUniformIsOne(t *testing.T) {
	if f := uniformChain(0.1).varianceFactor(); math.Abs(f-1) > 1e-9 {
		t.Errorf("uniform variance factor %v", f)
	}
	// With LB=1, LG=0 the loss indicator is the state, whose lag-k
	// autocorrelation is (1-p-r)^k: the factor is (1+lambda)/(1-lambda).
	c := geChain(loss.GEParams{P: 0.01, R: 0.3, LossBad: 1})
	lambda := 1 - 0.01 - 0.3
	if f, want := c.varianceFactor(), (1+lambda)/(1-lambda); math.Abs(f-want) > 1e-6 {
		t.Errorf("GE variance factor %v, want %v", f, want)
	}
}
