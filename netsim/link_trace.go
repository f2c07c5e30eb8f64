package netsim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// mahimahiOpportunityBytes is what one line of a Mahimahi trace may carry:
// one MTU-sized packet (Netravali et al., "Mahimahi", USENIX ATC 2015).
const mahimahiOpportunityBytes = 1500

// DeliveryTrace is a Mahimahi link trace: each entry is a delivery
// opportunity of 1500 bytes at a millisecond offset; repeated offsets give
// several opportunities in the same millisecond. The trace repeats with a
// period equal to its last offset, as Mahimahi's link shell does. A packet
// may use the unused bytes of an opportunity another packet started, and a
// large packet spans several opportunities; unused bytes expire with their
// opportunity.
type DeliveryTrace struct {
	opportunities []time.Duration // non-decreasing offsets within one period
	period        time.Duration
}

// ParseMahimahi reads a trace: one non-negative integer (milliseconds) per
// line, non-decreasing, the last one positive. Blank lines are skipped.
func ParseMahimahi(r io.Reader) (*DeliveryTrace, error) {
	var ms []uint64
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		v, err := strconv.ParseUint(text, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("mahimahi trace line %d: %q is not a millisecond count", line, text)
		}
		ms = append(ms, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mahimahi trace: %w", err)
	}
	return NewDeliveryTrace(ms)
}

// NewDeliveryTrace builds a trace from opportunity offsets in milliseconds.
func NewDeliveryTrace(ms []uint64) (*DeliveryTrace, error) {
	if len(ms) == 0 {
		return nil, errors.New("mahimahi trace has no delivery opportunity")
	}
	t := &DeliveryTrace{opportunities: make([]time.Duration, len(ms))}
	for i, v := range ms {
		if i > 0 && v < ms[i-1] {
			return nil, fmt.Errorf("mahimahi trace entry %d (%d ms) comes before entry %d (%d ms)", i, v, i-1, ms[i-1])
		}
		if v > 1<<32 {
			return nil, fmt.Errorf("mahimahi trace entry %d (%d ms) is too large", i, v)
		}
		t.opportunities[i] = time.Duration(v) * time.Millisecond
	}
	t.period = t.opportunities[len(ms)-1]
	if t.period == 0 {
		return nil, errors.New("mahimahi trace must last a non-zero time (its last entry is 0 ms)")
	}
	return t, nil
}

// Period is the time after which the trace repeats.
func (t *DeliveryTrace) Period() time.Duration { return t.period }

// MeanRateBps is the trace's long-run capacity in bit/s.
func (t *DeliveryTrace) MeanRateBps() float64 {
	return float64(len(t.opportunities)) * mahimahiOpportunityBytes * 8 / t.period.Seconds()
}

// traceCursor names one opportunity: entry index of repetition cycle.
type traceCursor struct {
	cycle int64
	index int
}

func (t *DeliveryTrace) at(c traceCursor) time.Duration {
	return time.Duration(c.cycle)*t.period + t.opportunities[c.index]
}

func (t *DeliveryTrace) next(c traceCursor) traceCursor {
	c.index++
	if c.index == len(t.opportunities) {
		c.index, c.cycle = 0, c.cycle+1
	}
	return c
}

// firstAtOrAfter finds the earliest opportunity at or after now.
func (t *DeliveryTrace) firstAtOrAfter(now time.Duration) traceCursor {
	if now <= 0 {
		return traceCursor{}
	}
	cycle := int64(now / t.period)
	within := now - time.Duration(cycle)*t.period
	// The previous cycle's last opportunities fall exactly on this cycle's
	// start, since the period is the last offset.
	if within == 0 {
		cycle, within = cycle-1, t.period
	}
	i := sort.Search(len(t.opportunities), func(i int) bool { return t.opportunities[i] >= within })
	if i == len(t.opportunities) {
		return traceCursor{cycle: cycle + 1}
	}
	return traceCursor{cycle: cycle, index: i}
}
