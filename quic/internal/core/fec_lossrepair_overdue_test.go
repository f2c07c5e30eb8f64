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
	f.takeOverdue(0)
	if f.stats.OverdueSources != 3 || !f.loss.isWaiting(3) || !f.loss.isWaiting(5) {
		t.Errorf("%d sources overdue, waiting %v; want 3, and 2 to 5 waiting", f.stats.OverdueSources, f.loss.waiting)
	}
	if _, ok := f.oldestWatched(); ok {
		t.Errorf("sources still watched after takeOverdue")
	}
	f.takeOverdue(0)
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

// TestOverdueSlack: the slack of the overdue deadline grows by the
// lateness of an acknowledgement of a take's oldest source, up to two
// probe timeouts, and halves when that source was lost indeed.
func TestOverdueSlack(t *testing.T) {
	var w overdueWatch
	const pto = 30 * time.Millisecond
	w.canaryDue, w.hasCanary = 100*time.Millisecond, true
	w.onCanaryAcked(112*time.Millisecond, pto)
	if w.slack != 12*time.Millisecond || w.hasCanary {
		t.Errorf("slack %v after an ACK 12ms late, want 12ms and the canary done", w.slack)
	}
	w.canaryDue, w.hasCanary = 200*time.Millisecond, true
	w.onCanaryAcked(205*time.Millisecond, pto)
	if w.slack != 12*time.Millisecond {
		t.Errorf("slack %v after an ACK 5ms late, want it kept at 12ms", w.slack)
	}
	w.canaryDue, w.hasCanary = 300*time.Millisecond, true
	w.onCanaryAcked(time.Second, pto)
	if w.slack != 2*pto {
		t.Errorf("slack %v after an ACK 700ms late, want two probe timeouts", w.slack)
	}
	w.hasCanary = true
	w.onCanaryLost()
	if w.slack != pto || w.hasCanary {
		t.Errorf("slack %v after a loss, want it halved to %v", w.slack, pto)
	}
}

// TestOverdueLateAcksLearned: the server sends a datagram every 5 ms;
// twice, the client's machine is busy and what it sends leaves only at
// the end, 120 ms then 90 ms later, with nothing lost. The first time
// the sources go overdue and wait for repairs; the watch learns the delay
// from the late ACK of the oldest, and the second time none goes overdue.
// Every datagram arrives once.
func TestOverdueLateAcksLearned(t *testing.T) {
	p := newLossRepairPair(t, func(sentKind, int) bool { return false })
	start := p.now
	type stall struct{ at, d time.Duration }
	stalls := []stall{{start + 500*time.Millisecond, 120 * time.Millisecond}, {start + 2500*time.Millisecond, 90 * time.Millisecond}}
	p.extraDelay = func(toServer bool, _ int, _ []byte) time.Duration {
		for _, s := range stalls {
			if toServer && p.now >= s.at && p.now < s.at+s.d {
				return s.at + s.d - p.now
			}
		}
		return 0
	}
	sent := 0
	var next time.Duration
	p.serverApp = func(now time.Duration, c *Conn) {
		for sent < 800 && now >= next {
			if err := c.SendDatagram(now, []byte{byte(sent), byte(sent >> 8)}); err != nil {
				t.Fatal(err)
			}
			sent++
			next = start + time.Duration(sent)*5*time.Millisecond
		}
	}
	overdueAt := func(at time.Duration) uint64 {
		p.mustRun(func() bool { return p.now >= at }, at+time.Second)
		return p.server.Stats().FEC.OverdueSources
	}
	first := overdueAt(stalls[1].at - 100*time.Millisecond)
	second := overdueAt(start+4200*time.Millisecond) - first
	if first == 0 || second != 0 {
		t.Errorf("%d sources overdue in the first stall, %d in the second: want some, then none", first, second)
	}
	p.mustRun(func() bool { return sent == 800 && p.server.Stats().BytesInFlight == 0 }, 10*time.Second)
	seen := map[int]int{}
	for _, b := range p.got {
		seen[int(b[0])|int(b[1])<<8]++
	}
	for i := range 800 {
		if seen[i] != 1 {
			t.Fatalf("datagram %d delivered %d times, want once", i, seen[i])
		}
	}
}
