package core

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// countNeededByScan is the count of repairs on loss as a walk over every
// source of the window, one window start at a time: the definition that
// countNeeded computes without the walk. It works on copies and returns
// the repairs needed, the sources still waiting and how many it gave up.
func countNeededByScan(f *fecSender) (int, []uint64, int) {
	l := &f.loss
	waiting := slices.Clone(l.waiting)
	flights := slices.DeleteFunc(slices.Clone(l.flights), func(r repairFlight) bool { return r.first+l.reach < f.src.next })
	givenUp := 0
	for len(waiting) > 0 {
		var unknowns []uint64
		for seq := waiting[0]; seq < f.src.next; seq++ {
			e := f.src.at(seq)
			if e != nil && (e.state == sourceLost || e.state == sourceOutstanding && slices.Contains(waiting, seq)) {
				unknowns = append(unknowns, seq)
			}
		}
		need := len(unknowns)
		for _, r := range flights {
			i, _ := slices.BinarySearch(unknowns, r.first)
			if i < len(unknowns) && unknowns[i] < r.end {
				need--
			}
		}
		need = max(need, 0)
		if f.budget.affordsInDebt(need, lossRepairMaxDebt) {
			return need, waiting, givenUp
		}
		waiting = waiting[1:]
		givenUp++
	}
	return 0, nil, givenUp
}

// randomLossState fills a sender with n sources whose fates, waiting
// sources, repairs remembered and allowance are drawn from rng.
func randomLossState(t *testing.T, rng *rand.Rand, n int) *fecSender {
	f := testFECSender(t)
	for pn := range uint64(n) {
		f.src.push(pn, 1200)
	}
	for pn := range uint64(n) {
		switch rng.IntN(10) {
		case 0, 1:
			f.src.finish(spaceApp, pn, sourceLost)
		case 2, 3, 4:
			f.src.finish(spaceApp, pn, sourceAcked)
		}
	}
	// Some lost sources are acknowledged late.
	for _, seq := range f.src.lost {
		if rng.IntN(5) == 0 {
			f.src.finish(spaceApp, f.src.at(seq).pn, sourceAcked)
		}
	}
	for seq := range uint64(n) {
		if e := f.src.at(seq); e.state != sourceAcked && rng.IntN(3) == 0 {
			f.loss.onSourceLost(seq)
		}
	}
	for range rng.IntN(lossRepairMaxFlights) {
		first := rng.Uint64N(uint64(n))
		f.loss.onRepairSent(uint64(n)+rng.Uint64N(1000), first, first+1+rng.Uint64N(uint64(n)-first))
	}
	f.budget.credit = (rng.Float64()*float64(fecMaxCredit+lossRepairMaxDebt) - lossRepairMaxDebt) * f.budget.full
	return f
}

// TestCountNeededMatchesScan: the count of repairs on loss from the
// waiting and lost sources gives what the walk over every source of the
// window gives, with the same sources given up, over random states: a
// few sources or a window's worth, none or many lost, repairs that cover
// none, some or all of them, an allowance from a full debt to full
// credit.
func TestCountNeededMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 3))
	for i := range 2000 {
		n := 1 + rng.IntN(200)
		if i%10 == 0 {
			n = 1000
		}
		f := randomLossState(t, rng, n)
		f.pruneWaiting()
		if len(f.loss.waiting) == 0 {
			continue
		}
		wantNeed, wantWaiting, wantGivenUp := countNeededByScan(f)
		before := f.stats.LostSourcesGivenUp
		need := f.countNeeded()
		if need != wantNeed || !slices.Equal(f.loss.waiting, wantWaiting) || f.stats.LostSourcesGivenUp-before != uint64(wantGivenUp) {
			t.Fatalf("state %d: need %d, %d waiting, %d given up; the scan: %d, %d, %d",
				i, need, len(f.loss.waiting), f.stats.LostSourcesGivenUp-before, wantNeed, len(wantWaiting), wantGivenUp)
		}
	}
}

// TestSourceLogLost: the log's list of lost sources stays ascending
// whatever order loss detection names them in, and loses those the log
// drops from its front.
func TestSourceLogLost(t *testing.T) {
	var l sourceLog
	for pn := range uint64(10) {
		l.push(pn, 100)
	}
	for _, pn := range []uint64{5, 2, 7, 3, 7} {
		l.finish(spaceApp, pn, sourceLost)
	}
	if want := []uint64{2, 3, 5, 7}; !slices.Equal(l.lost, want) {
		t.Fatalf("lost %v, want %v", l.lost, want)
	}
	for pn := range uint64(4) {
		l.finish(spaceApp, pn, sourceAcked)
	}
	l.compact(0)
	if want := []uint64{5, 7}; l.base != 4 || !slices.Equal(l.lost, want) {
		t.Errorf("after compaction to %d: lost %v, want base 4 and %v", l.base, l.lost, want)
	}
}

// BenchmarkCountNeeded: a count of repairs on loss over a window of a
// thousand sources, a few hundred of them waiting (an overdue flight)
// and the allowance short of most: what each ACK cost the sender of a
// tunnel at gigabits when the count walked every source of the window
// for each source it gave up.
func BenchmarkCountNeeded(b *testing.B) {
	f := testFECSender(b)
	const n = 1000
	for pn := range uint64(n) {
		f.src.push(pn, 1200)
	}
	for seq := uint64(n - 300); seq < n; seq++ {
		f.loss.onSourceLost(seq)
	}
	waiting := slices.Clone(f.loss.waiting)
	b.ReportAllocs()
	for b.Loop() {
		f.loss.waiting = append(f.loss.waiting[:0], waiting...)
		f.budget.credit = 0
		f.loss.dirty = true
		f.lossRepairsNeeded()
	}
}
