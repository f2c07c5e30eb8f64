//go:build linux

package probe

import (
	"math"
	"testing"
)

func TestChiSquareP(t *testing.T) {
	// Critical values of the chi-square distribution at the 1% and 5%
	// levels (any statistics table).
	for _, c := range []struct {
		x  float64
		df int
		p  float64
	}{
		{6.635, 1, 0.01}, {3.841, 1, 0.05}, {9.210, 2, 0.01}, {18.475, 7, 0.01},
		{14.067, 7, 0.05}, {37.566, 20, 0.01}, {0.0, 3, 1}, {2.0, 2, math.Exp(-1)},
	} {
		if got := chiSquareP(c.x, c.df); math.Abs(got-c.p) > 2e-4 {
			t.Errorf("P(chi2_%d > %v) = %.5f, want %.5f", c.df, c.x, got, c.p)
		}
	}
}
