package loss

import (
	"math"
	"testing"
)

// z99 is the two-sided 99% quantile of the standard normal distribution.
const z99 = 2.5758

// empiricalRate runs a model for n packets and returns the share dropped.
func empiricalRate(m Model, n int) float64 {
	drops := 0
	for range n {
		if m.Drop() {
			drops++
		}
	}
	return float64(drops) / float64(n)
}

// checkWithin fails unless rate lies within the 99% interval around mean,
// given the asymptotic per-packet variance of the loss indicator's average.
func checkWithin(t *testing.T, name string, seed uint64, rate, mean, variance float64, n int) {
	t.Helper()
	half := z99 * math.Sqrt(variance/float64(n))
	if math.Abs(rate-mean) > half {
		t.Errorf("%s seed %d: empirical loss %.6f, model %.6f, 99%% interval +-%.6f", name, seed, rate, mean, half)
	}
}

var testSeeds = []uint64{1, 2, 42, 0xdeadbeef}

func TestUniformRate(t *testing.T) {
	const n = 400_000
	for _, p := range []float64{0.001, 0.01, 0.3} {
		for _, seed := range testSeeds {
			m, err := NewUniform(p, seed)
			if err != nil {
				t.Fatal(err)
			}
			checkWithin(t, m.String(), seed, empiricalRate(m, n), m.Mean(), p*(1-p), n)
		}
	}
}

// geVariance is the asymptotic variance of the mean loss indicator of a
// Gilbert-Elliott chain: Bernoulli noise plus the chain's autocorrelation,
// which decays as lambda^k with lambda = 1-P-R.
func geVariance(g GEParams) float64 {
	m := g.Mean()
	bad := g.P / (g.P + g.R)
	lambda := 1 - g.P - g.R
	d := g.LossBad - g.LossGood
	return m*(1-m) + d*d*bad*(1-bad)*2*lambda/(1-lambda)
}

func TestGilbertElliottRate(t *testing.T) {
	const n = 1_000_000
	for _, g := range []GEParams{
		{P: 0.00151, R: 1.0 / 3, LossBad: 1},             // Starlink fit
		{P: 0.03, R: 0.4, LossBad: 0.95, LossGood: 0.01}, // ifc-geo
		{P: 0.01, R: 0.1, LossBad: 0.5},
	} {
		for _, seed := range testSeeds {
			m, err := NewGilbertElliott(g, seed)
			if err != nil {
				t.Fatal(err)
			}
			checkWithin(t, m.String(), seed, empiricalRate(m, n), m.Mean(), geVariance(g), n)
		}
	}
}

func TestGilbertElliottMeanFormula(t *testing.T) {
	g := GEParams{P: 0.00151, R: 1.0 / 3, LossBad: 1}
	if got, want := g.Mean(), 0.00151/(0.00151+1.0/3); math.Abs(got-want) > 1e-15 {
		t.Errorf("Mean = %v, want %v", got, want)
	}
	g = GEParams{P: 0.03, R: 0.4, LossBad: 0.95, LossGood: 0.01}
	if got, want := g.Mean(), (0.4*0.01+0.03*0.95)/0.43; math.Abs(got-want) > 1e-15 {
		t.Errorf("Mean = %v, want %v", got, want)
	}
	if got := (GEParams{LossGood: 0.2, LossBad: 1}).Mean(); got != 0.2 {
		t.Errorf("chain stuck in good state: Mean = %v, want 0.2", got)
	}
}

// burstVariance follows from renewal-reward: a cycle is a run of K losses
// and the forwarded packet after it, so the per-packet variance of the loss
// share theta is (1-theta)^2 Var(K) / E[K+1].
func burstVariance(p float64, maxBurst int) float64 {
	var ek, ek2 float64
	for k := 0; k <= maxBurst; k++ {
		prob := math.Pow(p, float64(k)) * (1 - p)
		if k == maxBurst {
			prob = math.Pow(p, float64(k))
		}
		ek += prob * float64(k)
		ek2 += prob * float64(k*k)
	}
	theta := ek / (ek + 1)
	return (1 - theta) * (1 - theta) * (ek2 - ek*ek) / (ek + 1)
}

func TestBurstRate(t *testing.T) {
	const n = 400_000
	for _, c := range []struct {
		p   float64
		max int
	}{{0.02, 3}, {0.3, 3}, {0.9, 2}, {0.5, 1}} {
		for _, seed := range testSeeds {
			m, err := NewBurst(c.p, c.max, seed)
			if err != nil {
				t.Fatal(err)
			}
			rate := empiricalRate(m, n)
			checkWithin(t, m.String(), seed, rate, m.Mean(), burstVariance(c.p, c.max), n)
		}
	}
}

func TestBurstMeanLimits(t *testing.T) {
	always, _ := NewBurst(1, 3, 1)
	if got := always.Mean(); got != 0.75 {
		t.Errorf("burst:1,3 Mean = %v, want 0.75", got)
	}
	// With P=1 the pattern is exact: three lost, one through.
	for i := range 12 {
		if got, want := always.Drop(), i%4 != 3; got != want {
			t.Fatalf("burst:1,3 packet %d: drop %v, want %v", i, got, want)
		}
	}
	// Close to 1 the formula meets the limit smoothly.
	near, _ := NewBurst(1-1e-9, 3, 1)
	if math.Abs(near.Mean()-0.75) > 1e-6 {
		t.Errorf("burst:0.999999999,3 Mean = %v, want ~0.75", near.Mean())
	}
}
