package loss

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Interval is an inclusive range of 0-based packet indices.
type Interval struct{ First, Last uint64 }

// DropList drops exactly the listed packet indices, counting from 0, and no
// other packet. It is for tests that need a loss at a precise place (the
// interop runner's droplist scenario).
type DropList struct {
	ranges []Interval // sorted, disjoint, not adjacent
	next   int        // first range that may still contain index
	index  uint64     // index of the next packet
}

// NewDropList returns a model dropping the packets in the given ranges, in
// any order; overlapping ranges are merged.
func NewDropList(ranges []Interval) (*DropList, error) {
	for _, r := range ranges {
		if r.First > r.Last {
			return nil, fmt.Errorf("drop range %d-%d is reversed", r.First, r.Last)
		}
	}
	return &DropList{ranges: mergeIntervals(ranges)}, nil
}

func parseDropList(args string) (Model, error) {
	var ranges []Interval
	for item := range strings.SplitSeq(args, ",") {
		r, err := parseInterval(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		ranges = append(ranges, r)
	}
	return NewDropList(ranges)
}

func parseInterval(s string) (Interval, error) {
	if s == "" {
		return Interval{}, errors.New("empty packet index in drop list")
	}
	lo, hi, isRange := strings.Cut(s, "-")
	first, err := strconv.ParseUint(lo, 10, 64)
	if err != nil {
		return Interval{}, fmt.Errorf("packet index %q is not a non-negative integer", lo)
	}
	if !isRange {
		return Interval{first, first}, nil
	}
	last, err := strconv.ParseUint(hi, 10, 64)
	if err != nil {
		return Interval{}, fmt.Errorf("packet index %q is not a non-negative integer", hi)
	}
	if first > last {
		return Interval{}, fmt.Errorf("drop range %d-%d is reversed", first, last)
	}
	return Interval{first, last}, nil
}

// mergeIntervals sorts ranges and joins overlapping or adjacent ones, so
// that String is canonical and Drop can walk them in order.
func mergeIntervals(in []Interval) []Interval {
	sorted := slices.Clone(in)
	slices.SortFunc(sorted, func(a, b Interval) int { return compareUint(a.First, b.First) })
	var out []Interval
	for _, r := range sorted {
		if n := len(out); n > 0 && (out[n-1].Last == ^uint64(0) || r.First <= out[n-1].Last+1) {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Drop reports whether the current index is listed, then moves on.
func (d *DropList) Drop() bool {
	i := d.index
	d.index++
	for d.next < len(d.ranges) && d.ranges[d.next].Last < i {
		d.next++
	}
	return d.next < len(d.ranges) && d.ranges[d.next].First <= i
}

// Mean is 0: a finite list loses nothing in the long run.
func (d *DropList) Mean() float64 { return 0 }

// String is "drop:" and the merged ranges in order.
func (d *DropList) String() string {
	items := make([]string, len(d.ranges))
	for i, r := range d.ranges {
		items[i] = strconv.FormatUint(r.First, 10)
		if r.Last != r.First {
			items[i] += "-" + strconv.FormatUint(r.Last, 10)
		}
	}
	return "drop:" + strings.Join(items, ",")
}
