package core

// span is the half-open interval [lo, hi) of uint64 values: packet numbers
// or byte offsets.
type span struct{ lo, hi uint64 }

func (s span) len() uint64 { return s.hi - s.lo }

// rangeSet is a set of uint64 values kept as ascending, disjoint,
// non-adjacent spans. It serves the received packet numbers of a space
// (ACK generation), the acknowledged and lost byte ranges of a send buffer,
// and the gaps of a receive buffer. Appending at the top, the common case,
// is O(1).
type rangeSet struct {
	s []span
}

func (r *rangeSet) empty() bool { return len(r.s) == 0 }

func (r *rangeSet) count() int { return len(r.s) }

// min returns the lowest value; the set must not be empty.
func (r *rangeSet) min() uint64 { return r.s[0].lo }

// max returns the highest value; the set must not be empty.
func (r *rangeSet) max() uint64 { return r.s[len(r.s)-1].hi - 1 }

// first returns the lowest span; the set must not be empty.
func (r *rangeSet) first() span { return r.s[0] }

// contains reports whether v is in the set.
func (r *rangeSet) contains(v uint64) bool {
	i := r.search(v)
	return i < len(r.s) && r.s[i].lo <= v
}

// search returns the index of the first span whose hi is above v.
func (r *rangeSet) search(v uint64) int {
	lo, hi := 0, len(r.s)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r.s[m].hi <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// firstGapFrom returns the smallest value at or above lo that is missing
// from the set and below its maximum, if any.
func (r *rangeSet) firstGapFrom(lo uint64) (uint64, bool) {
	i := r.search(lo)
	switch {
	case i == len(r.s):
		return 0, false
	case r.s[i].lo > lo:
		return lo, true
	case i+1 == len(r.s):
		return 0, false
	}
	return r.s[i].hi, true
}

// add inserts [lo, hi), merging with overlapping or adjacent spans.
func (r *rangeSet) add(lo, hi uint64) {
	if lo >= hi {
		return
	}
	n := len(r.s)
	if n == 0 || lo > r.s[n-1].hi {
		r.s = append(r.s, span{lo, hi})
		return
	}
	if lo >= r.s[n-1].lo {
		r.s[n-1].hi = max(r.s[n-1].hi, hi)
		return
	}
	// First span that could merge: the first whose hi reaches lo.
	i := r.search(lo)
	if i > 0 && r.s[i-1].hi == lo {
		i--
	}
	j := i
	for j < n && r.s[j].lo <= hi {
		j++
	}
	if i == j {
		r.s = append(r.s, span{})
		copy(r.s[i+1:], r.s[i:])
		r.s[i] = span{lo, hi}
		return
	}
	merged := span{min(lo, r.s[i].lo), max(hi, r.s[j-1].hi)}
	r.s[i] = merged
	r.s = append(r.s[:i+1], r.s[j:]...)
}

// total is the number of values in the set.
func (r *rangeSet) total() uint64 {
	var n uint64
	for _, sp := range r.s {
		n += sp.hi - sp.lo
	}
	return n
}

// remove deletes [lo, hi) from the set.
func (r *rangeSet) remove(lo, hi uint64) {
	if lo >= hi || len(r.s) == 0 || hi <= r.s[0].lo || lo >= r.s[len(r.s)-1].hi {
		return
	}
	i := r.search(lo)
	var out []span
	j := i
	for ; j < len(r.s) && r.s[j].lo < hi; j++ {
		sp := r.s[j]
		if sp.lo < lo {
			out = append(out, span{sp.lo, lo})
		}
		if sp.hi > hi {
			out = append(out, span{hi, sp.hi})
		}
	}
	if i == j {
		return
	}
	tail := append(out, r.s[j:]...)
	r.s = append(r.s[:i], tail...)
}

// removeBelow deletes every value below v.
func (r *rangeSet) removeBelow(v uint64) {
	i := r.search(v)
	if i < len(r.s) && r.s[i].lo < v {
		r.s[i].lo = v
	}
	if i > 0 {
		r.s = append(r.s[:0], r.s[i:]...)
	}
}

// dropLowest removes the lowest span.
func (r *rangeSet) dropLowest() {
	r.s = append(r.s[:0], r.s[1:]...)
}

// takeFirst removes and returns up to n values from the start of the
// lowest span.
func (r *rangeSet) takeFirst(n uint64) span {
	sp := r.s[0]
	if sp.len() <= n {
		r.dropLowest()
		return sp
	}
	r.s[0].lo += n
	return span{sp.lo, sp.lo + n}
}

func (r *rangeSet) clear() { r.s = r.s[:0] }
