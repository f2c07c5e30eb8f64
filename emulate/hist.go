//go:build linux

package emulate

import (
	"math/bits"
	"time"
)

// histSubBuckets is the number of buckets per doubling of the value: 64
// keeps every quantile within about 1.5% of the true value.
const (
	histSubBits    = 6
	histSubBuckets = 1 << histSubBits
	histBuckets    = histSubBuckets * 40
)

// hist is a log-linear histogram of durations at microsecond resolution,
// from 0 to far beyond any delay an emulated link has, in fixed memory.
type hist struct {
	counts [histBuckets]uint64
	total  uint64
	max    time.Duration
}

func histIndex(us uint64) int {
	if us < histSubBuckets {
		return int(us)
	}
	shift := bits.Len64(us) - histSubBits - 1
	return min(histSubBuckets*(shift+1)+int(us>>shift)-histSubBuckets, histBuckets-1)
}

// histLow is the smallest value, in microseconds, that falls in bucket i.
func histLow(i int) uint64 {
	if i < histSubBuckets {
		return uint64(i)
	}
	shift := i/histSubBuckets - 1
	return uint64(histSubBuckets+i%histSubBuckets) << shift
}

func (h *hist) add(d time.Duration) {
	d = max(d, 0)
	h.counts[histIndex(uint64(d/time.Microsecond))]++
	h.total++
	h.max = max(h.max, d)
}

// quantile returns the middle of the bucket that holds the q-quantile, or 0
// for an empty histogram.
func (h *hist) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(q*float64(h.total) + 0.5)
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			low, high := histLow(i), histLow(i+1)
			mid := time.Duration(low+high) * time.Microsecond / 2
			return min(mid, h.max)
		}
	}
	return h.max
}
