package loss

import "math/rand/v2"

// Uniform drops each packet independently with probability P (netem's
// "loss random").
type Uniform struct {
	p   float64
	rng *rand.Rand
}

// NewUniform returns a Bernoulli loss model; p must lie in [0,1].
func NewUniform(p float64, seed uint64) (*Uniform, error) {
	if err := checkProbability("loss probability", p); err != nil {
		return nil, err
	}
	return &Uniform{p: p, rng: newRand(seed)}, nil
}

func parseUniform(args string, seed uint64) (Model, error) {
	p, err := parseProbability("loss probability", args)
	if err != nil {
		return nil, err
	}
	return NewUniform(p, seed)
}

// Drop draws one Bernoulli trial. Float64 lies in [0,1), so p=0 never drops
// and p=1 always does.
func (u *Uniform) Drop() bool { return u.rng.Float64() < u.p }

// Mean is P.
func (u *Uniform) Mean() float64 { return u.p }

// String is "uniform:P".
func (u *Uniform) String() string { return "uniform:" + formatFloat(u.p) }
