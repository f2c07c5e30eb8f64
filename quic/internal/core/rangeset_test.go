package core

import (
	"math/rand/v2"
	"testing"
)

// TestRangeSetModel checks random adds and removes against a set of
// values.
func TestRangeSetModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		var rs rangeSet
		model := map[uint64]bool{}
		for step := range 400 {
			lo := r.Uint64N(200)
			hi := lo + r.Uint64N(12)
			if r.IntN(3) == 0 {
				rs.remove(lo, hi)
				for v := lo; v < hi; v++ {
					delete(model, v)
				}
			} else {
				rs.add(lo, hi)
				for v := lo; v < hi; v++ {
					model[v] = true
				}
			}
			checkRangeSet(t, seed, step, &rs, model)
		}
	}
}

func checkRangeSet(t *testing.T, seed uint64, step int, rs *rangeSet, model map[uint64]bool) {
	t.Helper()
	for i, s := range rs.s {
		if s.lo >= s.hi || (i > 0 && rs.s[i-1].hi >= s.lo) {
			t.Fatalf("seed %d step %d: spans not ascending, disjoint and apart: %v", seed, step, rs.s)
		}
	}
	for v := uint64(0); v < 220; v++ {
		if rs.contains(v) != model[v] {
			t.Fatalf("seed %d step %d: contains(%d) = %v, want %v (%v)", seed, step, v, rs.contains(v), model[v], rs.s)
		}
	}
}

func TestRangeSetTakeAndBelow(t *testing.T) {
	var rs rangeSet
	rs.add(10, 20)
	rs.add(30, 40)
	if got := rs.takeFirst(4); got != (span{10, 14}) {
		t.Fatalf("takeFirst(4) = %v", got)
	}
	if got := rs.takeFirst(100); got != (span{14, 20}) {
		t.Fatalf("takeFirst(100) = %v", got)
	}
	rs.removeBelow(35)
	if len(rs.s) != 1 || rs.s[0] != (span{35, 40}) || rs.min() != 35 || rs.max() != 39 {
		t.Fatalf("after removeBelow(35): %v", rs.s)
	}
}
