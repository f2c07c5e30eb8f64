package loss

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Burst drops each packet with probability P but never more than Max in a
// row: the packet after a run of Max losses always gets through. This is the
// QUIC interop runner's drop-rate model with its cap made exact (see the
// package comment).
type Burst struct {
	p      float64
	max    int
	inARow int
	rng    *rand.Rand
}

// NewBurst returns a capped-burst Bernoulli model; p in [0,1], maxBurst >= 1.
func NewBurst(p float64, maxBurst int, seed uint64) (*Burst, error) {
	if err := checkProbability("loss probability", p); err != nil {
		return nil, err
	}
	if maxBurst < 1 {
		return nil, fmt.Errorf("maximum burst %d must be at least 1", maxBurst)
	}
	return &Burst{p: p, max: maxBurst, rng: newRand(seed)}, nil
}

func parseBurst(args string, seed uint64) (Model, error) {
	parts, err := splitParams("burst", args, 2, 2)
	if err != nil {
		return nil, err
	}
	p, err := parseProbability("loss probability", parts[0])
	if err != nil {
		return nil, err
	}
	maxBurst, err := strconv.Atoi(strings.TrimSpace(parts[1]))
	if err != nil {
		return nil, fmt.Errorf("maximum burst %q is not an integer", parts[1])
	}
	return NewBurst(p, maxBurst, seed)
}

// Drop forwards the packet that follows a full run, else draws.
func (b *Burst) Drop() bool {
	if b.inARow >= b.max {
		b.inARow = 0
		return false
	}
	if b.rng.Float64() < b.p {
		b.inARow++
		return true
	}
	b.inARow = 0
	return false
}

// Mean is the stationary loss rate of the run-length chain. The chain sits
// in run length k (0..Max) with weight p^k, and a packet is lost from every
// state but Max, with probability p: p(1-p^Max)/(1-p^(Max+1)), which tends to
// Max/(Max+1) as p tends to 1.
func (b *Burst) Mean() float64 {
	if b.p == 1 {
		return float64(b.max) / float64(b.max+1)
	}
	return b.p * (1 - math.Pow(b.p, float64(b.max))) / (1 - math.Pow(b.p, float64(b.max+1)))
}

// String is "burst:P,MAX".
func (b *Burst) String() string {
	return "burst:" + formatFloat(b.p) + "," + strconv.Itoa(b.max)
}
