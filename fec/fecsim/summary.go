package fecsim

import (
	"slices"
)

// RecoveredTarget is the recovered ratio a run must reach to count as a
// success in Summary.RunsRecovered (the paper's "more than 95% of erased
// packets are recovered").
const RecoveredTarget = 0.95

// Summary condenses one scheme's results over the points of a sweep, the
// way figure 11a's CDFs are read.
type Summary struct {
	Scheme string `json:"scheme"`
	Label  string `json:"label"`
	Runs   int    `json:"runs"`
	// Overhead and recovered ratio: median and mean over the runs, and
	// the worst (lowest) recovered ratio.
	MedianOverhead  float64 `json:"median_overhead"`
	MeanOverhead    float64 `json:"mean_overhead"`
	MedianRecovered float64 `json:"median_recovered_ratio"`
	MeanRecovered   float64 `json:"mean_recovered_ratio"`
	MinRecovered    float64 `json:"min_recovered_ratio"`
	// RunsRecovered counts the runs whose recovered ratio is at least
	// RecoveredTarget.
	RunsRecovered int `json:"runs_recovered_95"`
	// MedianDelayP99 is the median over runs of the p99 recovery delay.
	MedianDelayP99 float64 `json:"median_recovery_delay_p99"`
	Mismatches     int64   `json:"mismatches"`
	DecodeErrors   int64   `json:"decode_errors"`
}

// Summarize returns one Summary per scheme of a sweep, in scheme order.
func Summarize(points []PointResult) []Summary {
	if len(points) == 0 {
		return nil
	}
	out := make([]Summary, len(points[0].Results))
	for si := range out {
		var ovh, rec, d99 []float64
		s := &out[si]
		for _, p := range points {
			r := p.Results[si]
			s.Scheme, s.Label = r.Scheme, r.Label
			ovh = append(ovh, r.Overhead)
			rec = append(rec, r.RecoveredRatio)
			d99 = append(d99, r.RecoveryDelayP99)
			if r.RecoveredRatio >= RecoveredTarget {
				s.RunsRecovered++
			}
			s.Mismatches += r.Mismatches
			s.DecodeErrors += r.DecodeErrors
		}
		s.Runs = len(points)
		s.MedianOverhead, s.MeanOverhead = median(ovh), mean(ovh)
		s.MedianRecovered, s.MeanRecovered = median(rec), mean(rec)
		s.MinRecovered = slices.Min(rec)
		s.MedianDelayP99 = median(d99)
	}
	return out
}

// median of v (the mean of the two middle values for an even count); it
// sorts v.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
