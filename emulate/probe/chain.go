//go:build linux

package probe

import (
	"math"

	"github.com/satquic/satquic/netsim/loss"
)

// chain is a loss model as a two-state hidden Markov chain, in netsim's
// order: a packet is lost with the loss probability of the current state,
// then the chain moves. A uniform loss is the chain that never leaves its
// good state.
type chain struct {
	t    [2][2]float64 // t[from][to]; state 0 is good, 1 bad
	loss [2]float64
	pi   [2]float64 // stationary distribution
}

func geChain(g loss.GEParams) chain {
	c := chain{
		t:    [2][2]float64{{1 - g.P, g.P}, {g.R, 1 - g.R}},
		loss: [2]float64{g.LossGood, g.LossBad},
		pi:   [2]float64{1, 0},
	}
	if g.P+g.R > 0 {
		c.pi = [2]float64{g.R / (g.P + g.R), g.P / (g.P + g.R)}
	}
	return c
}

func uniformChain(p float64) chain {
	return geChain(loss.GEParams{P: 0, R: 1, LossGood: p, LossBad: p})
}

// modelChain returns the chain of a loss spec, when it is one of the
// Markov models (none, uniform, Gilbert-Elliott).
func modelChain(spec string) (chain, bool) {
	m, err := loss.Parse(spec, 0)
	if err != nil {
		return chain{}, false
	}
	switch m := m.(type) {
	case loss.None:
		return uniformChain(0), true
	case *loss.Uniform:
		return uniformChain(m.Mean()), true
	case *loss.GilbertElliott:
		return geChain(m.Params()), true
	}
	return chain{}, false
}

func (c chain) mean() float64 { return c.pi[0]*c.loss[0] + c.pi[1]*c.loss[1] }

// step moves a row vector of state weights one packet on: v T.
func (c chain) step(v [2]float64) [2]float64 {
	return [2]float64{v[0]*c.t[0][0] + v[1]*c.t[1][0], v[0]*c.t[0][1] + v[1]*c.t[1][1]}
}

// runLengths returns P(a loss run has length n) for n = 1..maxLen, and the
// probability of a longer run.
//
// A run starts at a lost packet whose predecessor arrived. With w_1 the
// joint weight of (predecessor arrived, state, lost) and w_{k+1} = (w_k T)
// scaled by the loss probabilities, P(length = n) is (w_n T) . (1 - loss),
// normalised by the total weight of w_1.
func (c chain) runLengths(maxLen int) (probs []float64, longer float64) {
	var arrived [2]float64
	for s := range 2 {
		arrived[s] = c.pi[s] * (1 - c.loss[s])
	}
	start := c.step(arrived)
	w := [2]float64{start[0] * c.loss[0], start[1] * c.loss[1]}
	total := w[0] + w[1]
	if total == 0 {
		return make([]float64, maxLen), 0
	}
	probs = make([]float64, maxLen)
	cum := 0.0
	for n := range maxLen {
		next := c.step(w)
		probs[n] = (next[0]*(1-c.loss[0]) + next[1]*(1-c.loss[1])) / total
		cum += probs[n]
		w = [2]float64{next[0] * c.loss[0], next[1] * c.loss[1]}
	}
	return probs, max(1-cum, 0)
}

// meanRun is the expected loss-run length.
func (c chain) meanRun() float64 {
	probs, _ := c.runLengths(100000)
	m := 0.0
	for i, p := range probs {
		m += float64(i+1) * p
	}
	return m
}

// varianceFactor is how much correlation between successive losses widens
// the variance of a measured loss rate over a binomial's: 1 + 2 sum of the
// lag-k autocorrelations of the loss indicator.
func (c chain) varianceFactor() float64 {
	m := c.mean()
	v0 := m * (1 - m)
	if v0 == 0 {
		return 1
	}
	// u_k = pi D T^k; the lag-k covariance is u_k . loss - m^2.
	u := [2]float64{c.pi[0] * c.loss[0], c.pi[1] * c.loss[1]}
	sum := 0.0
	for range 10_000_000 {
		u = c.step(u)
		cov := u[0]*c.loss[0] + u[1]*c.loss[1] - m*m
		sum += cov
		if math.Abs(cov) < 1e-12*v0 {
			break
		}
	}
	return 1 + 2*sum/v0
}
