//go:build linux

package probe

import "math"

// chiSquareP is the probability that a chi-square variable with df
// degrees of freedom exceeds x: the upper regularised incomplete gamma
// function Q(df/2, x/2).
func chiSquareP(x float64, df int) float64 {
	if x <= 0 || df <= 0 {
		return 1
	}
	return upperGamma(float64(df)/2, x/2)
}

// upperGamma is Q(a, x), by its power series below a+1 and by its
// continued fraction above, the usual split for fast convergence.
func upperGamma(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	prefix := math.Exp(a*math.Log(x) - x - lg)
	if x < a+1 {
		// P(a,x) = x^a e^-x / Gamma(a+1) * sum x^n / ((a+1)...(a+n))
		term, sum := 1/a, 1/a
		for n := 1; n < 1000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if term < sum*1e-15 {
				break
			}
		}
		return max(1-prefix*sum, 0)
	}
	// Q(a,x) = x^a e^-x / Gamma(a) * 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...)))
	// evaluated with the modified Lentz method.
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 1000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := d * c
		h *= delta
		if math.Abs(delta-1) < 1e-15 {
			break
		}
	}
	return prefix * h
}
