package core

import (
	"testing"
	"time"
)

// TestCarriesDataPing: a packet of a PING (a probe timeout's, or a
// keep-alive), an IMMEDIATE_ACK or path validation frames carries nothing
// that is sent again: such a packet in flight must not stop the next
// probe timeout from sending repairs (probeWithRepairs). Stream data and
// control frames still count.
func TestCarriesDataPing(t *testing.T) {
	for _, c := range []struct {
		frames []sentFrame
		want   bool
	}{
		{[]sentFrame{{kind: fkPing}}, false},
		{[]sentFrame{{kind: fkAck}, {kind: fkPing}, {kind: fkImmediateAck}}, false},
		{[]sentFrame{{kind: fkPathChallenge}}, false},
		{[]sentFrame{{kind: fkPathResponse}}, false},
		{[]sentFrame{{kind: fkDatagram}, {kind: fkFECSourceID}, {kind: fkPing}}, false},
		{[]sentFrame{{kind: fkPing}, {kind: fkStream}}, true},
		{[]sentFrame{{kind: fkMaxData}}, true},
	} {
		if got := carriesData(c.frames); got != c.want {
			t.Errorf("carriesData(%v) = %v, want %v", c.frames, got, c.want)
		}
	}
}

// TestOverdueWatch: sources are watched in the order sent; those
// acknowledged, lost or already waiting leave the watch, and taking the
// overdue ones makes every source still watched wait for repairs, once.
func TestOverdueWatch(t *testing.T) {
	f := &fecSender{loss: lossRepair{reach: 64}}
	for i := range 6 {
		seq := f.src.push(uint64(10+i), 1000)
		f.src.at(seq).unresent = true
		f.loss.overdue.push(seq, time.Duration(i)*time.Millisecond)
	}
	f.src.finish(spaceApp, 10, sourceAcked)
	f.src.finish(spaceApp, 11, sourceLost)
	f.loss.onSourceLost(2)
	if at, ok := f.oldestWatched(); !ok || at != 3*time.Millisecond {
		t.Fatalf("oldest watched sent at %v, %v; want 3ms (sources 0 to 2 are done)", at, ok)
	}
	f.takeOverdue()
	if f.stats.OverdueSources != 3 || !f.loss.isWaiting(3) || !f.loss.isWaiting(5) {
		t.Errorf("%d sources overdue, waiting %v; want 3, and 2 to 5 waiting", f.stats.OverdueSources, f.loss.waiting)
	}
	if _, ok := f.oldestWatched(); ok {
		t.Errorf("sources still watched after takeOverdue")
	}
	f.takeOverdue()
	if f.stats.OverdueSources != 3 {
		t.Errorf("%d sources overdue after a second take, want 3", f.stats.OverdueSources)
	}
	// The queue reuses its front: a long run never keeps more than the
	// sources in flight.
	for i := range 1000 {
		seq := f.src.push(uint64(100+i), 1000)
		f.loss.overdue.push(seq, time.Duration(i))
		f.src.finish(spaceApp, uint64(100+i), sourceAcked)
		f.oldestWatched()
	}
	if n := cap(f.loss.overdue.q); n > 16 {
		t.Errorf("watch queue grew to %d entries for one source in flight", n)
	}
}
