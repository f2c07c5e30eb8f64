package loss

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// GEParams are the parameters of a Gilbert-Elliott model, named as in netem's
// "loss gemodel p r 1-h 1-k".
type GEParams struct {
	P        float64 // transition probability good -> bad, per packet
	R        float64 // transition probability bad -> good, per packet
	LossBad  float64 // loss probability in the bad state (netem 1-h)
	LossGood float64 // loss probability in the good state (netem 1-k)
}

// Validate checks that every parameter is a probability.
func (g GEParams) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"p (good->bad)", g.P}, {"r (bad->good)", g.R}, {"loss in bad state", g.LossBad}, {"loss in good state", g.LossGood}} {
		if err := checkProbability(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// Mean is the stationary loss probability (R*LG + P*LB)/(P+R). A chain that
// never leaves the good state (P = R = 0) loses LG.
func (g GEParams) Mean() float64 {
	if g.P+g.R == 0 {
		return g.LossGood
	}
	return (g.R*g.LossGood + g.P*g.LossBad) / (g.P + g.R)
}

// GilbertElliott is a two-state Markov loss model.
type GilbertElliott struct {
	params GEParams
	bad    bool
	rng    *rand.Rand
}

// NewGilbertElliott returns a Gilbert-Elliott model starting in the good
// state.
func NewGilbertElliott(params GEParams, seed uint64) (*GilbertElliott, error) {
	if err := params.Validate(); err != nil {
		return nil, err
	}
	return &GilbertElliott{params: params, rng: newRand(seed)}, nil
}

func parseGilbertElliott(args string, seed uint64) (Model, error) {
	parts, err := splitParams("ge", args, 2, 4)
	if err != nil {
		return nil, err
	}
	g := GEParams{LossBad: 1}
	targets := []*float64{&g.P, &g.R, &g.LossBad, &g.LossGood}
	names := []string{"p (good->bad)", "r (bad->good)", "loss in bad state", "loss in good state"}
	for i, s := range parts {
		if *targets[i], err = parseProbability(names[i], s); err != nil {
			return nil, err
		}
	}
	return NewGilbertElliott(g, seed)
}

// Drop decides with the loss probability of the current state, then makes
// the state transition (netem's order).
func (g *GilbertElliott) Drop() bool {
	lossProb, leave := g.params.LossGood, g.params.P
	if g.bad {
		lossProb, leave = g.params.LossBad, g.params.R
	}
	drop := g.draw(lossProb)
	if g.draw(leave) {
		g.bad = !g.bad
	}
	return drop
}

// draw is a Bernoulli trial that skips the generator for the certain cases,
// which keeps the common LB=1, LG=0 setting at one draw per packet.
func (g *GilbertElliott) draw(p float64) bool {
	switch p {
	case 0:
		return false
	case 1:
		return true
	}
	return g.rng.Float64() < p
}

// Params returns the model's parameters.
func (g *GilbertElliott) Params() GEParams { return g.params }

// Mean is the stationary loss probability.
func (g *GilbertElliott) Mean() float64 { return g.params.Mean() }

// String is "ge:P,R[,LB[,LG]]", leaving out trailing defaults.
func (g *GilbertElliott) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ge:%s,%s", formatFloat(g.params.P), formatFloat(g.params.R))
	switch {
	case g.params.LossGood != 0:
		fmt.Fprintf(&b, ",%s,%s", formatFloat(g.params.LossBad), formatFloat(g.params.LossGood))
	case g.params.LossBad != 1:
		fmt.Fprintf(&b, ",%s", formatFloat(g.params.LossBad))
	}
	return b.String()
}
