package bench

import (
	"math"
	"slices"
)

// Percentile returns the q-th quantile (0 <= q <= 1) of the samples by
// linear interpolation between the closest ranks (Hyndman and Fan's type
// 7, the default of R and NumPy): the median of an even count is the mean
// of the middle two, q=0 is the minimum and q=1 the maximum. It returns NaN
// for no samples.
func Percentile(samples []float64, q float64) float64 {
	if len(samples) == 0 || q < 0 || q > 1 {
		return math.NaN()
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return sortedPercentile(s, q)
}

func sortedPercentile(s []float64, q float64) float64 {
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Summary is the distribution of one stack's completion times at one size.
type Summary struct {
	Median, P90, P99, Min, Max float64
}

// Summarize computes a Summary; samples must not be empty.
func Summarize(samples []float64) Summary {
	s := slices.Clone(samples)
	slices.Sort(s)
	return Summary{
		Median: sortedPercentile(s, 0.5),
		P90:    sortedPercentile(s, 0.9),
		P99:    sortedPercentile(s, 0.99),
		Min:    s[0],
		Max:    s[len(s)-1],
	}
}
