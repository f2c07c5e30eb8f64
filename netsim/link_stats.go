package netsim

import (
	"math"
	"math/bits"
	"time"
)

// LinkStats counts what happened to the packets offered to a link. Every
// offered packet and every duplicate ends in exactly one of Delivered, a
// Dropped counter, or InFlight:
//
//	Offered + Duplicated = Delivered + DroppedMTU + DroppedOutage +
//	                       DroppedLoss + DroppedQueue + InFlight
type LinkStats struct {
	Offered       int64 // packets handed to Offer
	Delivered     int64 // packets returned by Deliver
	DroppedLoss   int64 // lost to the loss model
	DroppedQueue  int64 // dropped by the queue limit (drop-tail)
	DroppedOutage int64 // offered while the link was down
	DroppedMTU    int64 // larger than the MTU
	Duplicated    int64 // extra copies made
	Corrupted     int64 // packets with a replaced byte
	CEMarked      int64 // packets marked CE (ECNThreshold)
	InFlight      int64 // admitted, not yet delivered

	OfferedBytes   int64
	DeliveredBytes int64

	// TimeRegressions counts Offer calls whose time went backwards; the
	// link treated them as offered at the latest time it had seen.
	TimeRegressions int64

	// Queue delay: the time admitted packets waited for the serializer.
	// Percentiles are exact below 128 ns and within 1/64 above.
	QueueDelayP50 time.Duration
	QueueDelayP99 time.Duration
	QueueDelayMax time.Duration
	MaxQueueBytes int // the largest backlog seen, in bytes
}

// Dropped is the sum of all drop counters.
func (s LinkStats) Dropped() int64 {
	return s.DroppedLoss + s.DroppedQueue + s.DroppedOutage + s.DroppedMTU
}

// histogram is a log-linear histogram of non-negative durations with 64
// buckets per power of two (values below 128 have a bucket each), fixed in
// size so that recording never allocates.
type histogram struct {
	counts [64 * 60]uint64
	total  uint64
	max    time.Duration
}

const histSubBits = 7 // mantissa bits: 2^7 = 128 exact values, then 64 per octave

func histBucket(v uint64) int {
	if v < 1<<histSubBits {
		return int(v)
	}
	e := bits.Len64(v) - histSubBits
	return e<<(histSubBits-1) + int(v>>e)
}

// histValue is the middle of a bucket's range.
func histValue(i int) time.Duration {
	if i < 1<<histSubBits {
		return time.Duration(i)
	}
	e := i>>(histSubBits-1) - 1
	m := uint64(i - e<<(histSubBits-1))
	lo := m << e
	return time.Duration(lo + (uint64(1)<<e-1)/2)
}

func (h *histogram) record(d time.Duration) {
	v := uint64(max(d, 0))
	i := min(histBucket(v), len(h.counts)-1)
	h.counts[i]++
	h.total++
	h.max = max(h.max, d)
}

// quantile returns the value at quantile q in [0,1].
func (h *histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = max(rank, 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(histValue(i), h.max)
		}
	}
	return h.max
}
