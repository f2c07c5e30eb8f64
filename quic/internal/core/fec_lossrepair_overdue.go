package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// Overdue sources. Repairs on detected loss (fec_lossrepair.go) wait for
// loss detection, and the probe timeout's repairs for the probe timeout;
// neither comes when an outage takes a burst whose sender then sends
// again, as a tunnel's does: the requests rebuilt at the other end, or of
// flows the outage missed, are answered, and each packet sent moves the
// probe timeout on (RFC 9002 section 6.2.1 counts it from the last
// ack-eliciting packet sent), while the burst's loss shows only when the
// peer acknowledges those new packets, a round trip after they left.
// Measured in virtual time over starlink, five flows of 10 kB requests
// waited up to 287 ms for an outage so (TestSimFlowsOverOutage).
//
// So each source whose content is not sent again is watched from the
// time it was sent: once the oldest is a probe timeout old (the time its
// acknowledgement may take: a smoothed RTT, four variations and the
// peer's maximum ACK delay, as the probe timeout counts from the last
// packet), it and every source watched after it wait for repairs as
// sources known lost do (an outage takes a run of them). Unless loss
// recovery's own timer comes within half a smoothed RTT: its probe
// timeout then takes them (onProbeTimeout), and its probes may exceed the
// congestion window that the repairs of overdue sources may not. Nothing
// is declared lost to congestion control and nothing is sent again: the
// repairs are new packets, congestion controlled and paced like any, that
// take from the overhead allowance as repairs on loss do (RFC 9002
// section 6.2.4 lets a sender choose what it sends to reduce a loss
// recovery's delay). A source whose acknowledgement was only late leaves
// the waiting list with it (pruneWaiting); each source is watched once.

//
// A busy machine delays ACKs beyond that without loss: the receiving
// end's goroutines wait for a core, and a lossless tunnel over a veth
// took a few hundred sources a second for overdue, each run of them given
// up or repaired for nothing. So the watch learns from the sources it
// took by mistake, as RACK learns its reordering window from spurious
// retransmissions (RFC 8985 section 6.2): when the oldest source of a
// take (the one whose deadline passed) is acknowledged after all, the
// deadline gets as much slack as its acknowledgement was late, up to two
// probe timeouts, and when it was lost indeed (declared lost, or rebuilt
// by the peer) the slack halves.

// watchedSource is a watched source: its sequence number and send time.
type watchedSource struct {
	seq uint64
	at  time.Duration
}

// overdueWatch holds the watched sources in the order they were sent.
type overdueWatch struct {
	q    []watchedSource
	head int
	// slack is added to each source's deadline: how late
	// acknowledgements of sources taken for overdue came.
	slack time.Duration
	// canary is the packet of the last take's oldest source, whose fate
	// tells whether the take was right; due is its deadline without
	// slack.
	canary    uint64
	canaryDue time.Duration
	hasCanary bool
}

// maxOverdueSlack is the most slack, in probe timeouts: an outage's
// repairs still go well before a tunnelled TCP's retransmission timeout
// (200 ms) on paths of a few tens of milliseconds.
const maxOverdueSlack = 2

// onCanaryAcked learns from the acknowledgement at now of the last take's
// oldest source that the take was a mistake: the slack grows to cover the
// delay, at most maxOverdueSlack times pto.
func (w *overdueWatch) onCanaryAcked(now, pto time.Duration) {
	w.hasCanary = false
	w.slack = min(max(w.slack, now-w.canaryDue), maxOverdueSlack*pto)
}

// onCanaryLost learns that the last take's oldest source was lost indeed:
// the slack halves.
func (w *overdueWatch) onCanaryLost() {
	w.hasCanary = false
	w.slack /= 2
}

// push watches source seq, sent at at.
func (w *overdueWatch) push(seq uint64, at time.Duration) {
	if w.head > 0 && w.head >= len(w.q)/2 {
		// Reuse the front the pops freed, so that the queue does not
		// grow with the connection's age.
		n := copy(w.q, w.q[w.head:])
		w.q, w.head = w.q[:n], 0
	}
	w.q = append(w.q, watchedSource{seq: seq, at: at})
}

// front returns the oldest watched source.
func (w *overdueWatch) front() (watchedSource, bool) {
	if w.head == len(w.q) {
		return watchedSource{}, false
	}
	return w.q[w.head], true
}

// pop drops the oldest watched source.
func (w *overdueWatch) pop() {
	w.head++
	if w.head == len(w.q) {
		w.q, w.head = w.q[:0], 0
	}
}

// watched reports whether source seq still needs watching: outstanding,
// and not already waiting for a repair.
func (f *fecSender) watched(seq uint64) bool {
	e := f.src.at(seq)
	return e != nil && e.state == sourceOutstanding && !f.loss.isWaiting(seq)
}

// oldestWatched returns the send time of the oldest source still watched,
// forgetting those acknowledged, lost or waiting since.
func (f *fecSender) oldestWatched() (time.Duration, bool) {
	for {
		s, ok := f.loss.overdue.front()
		if !ok {
			return 0, false
		}
		if f.watched(s.seq) {
			return s.at, true
		}
		f.loss.overdue.pop()
	}
}

// takeOverdue makes every watched source wait for repairs, those sent
// after the overdue one too: an outage takes a run of them, and a repair
// rebuilds nothing unless the repairs reach the number of sources missing
// in its window, which ends at the newest source (RFC 8681 section 3).
// Taking only the overdue ones sent their repairs a few at a time, each
// set too few to rebuild the run. The oldest, whose deadline without
// slack was due, is the canary whose fate tunes the slack.
func (f *fecSender) takeOverdue(due time.Duration) {
	if s, ok := f.loss.overdue.front(); ok && f.watched(s.seq) {
		w := &f.loss.overdue
		w.canary, w.canaryDue, w.hasCanary = f.src.at(s.seq).pn, due, true
	}
	for {
		s, ok := f.loss.overdue.front()
		if !ok {
			return
		}
		if f.watched(s.seq) {
			f.loss.onSourceLost(s.seq)
			f.stats.OverdueSources++
		}
		f.loss.overdue.pop()
	}
}

// overdueDeadline is when the oldest watched source becomes overdue (f
// may be nil: FEC is off).
func (c *Conn) overdueDeadline() (time.Duration, bool) {
	f := c.fec
	if f == nil || f.send == nil || f.cfg.NoLossRepair {
		return 0, false
	}
	at, ok := f.send.oldestWatched()
	if !ok {
		return 0, false
	}
	rtt := c.sender.RTT()
	t := at + probeTimeout(rtt) + f.send.loss.overdue.slack
	if d, ok := c.sender.Deadline(); ok && d <= t+rtt.SmoothedRTT()/2 {
		// Loss recovery's timer comes about as soon: its probe
		// timeout's probes, which may exceed the congestion window
		// (RFC 9002 section 7.5), carry the repairs (onProbeTimeout).
		return 0, false
	}
	return t, true
}

// onOverdue makes the sources overdue at now wait for repairs.
func (c *Conn) onOverdue(now time.Duration) {
	if t, ok := c.overdueDeadline(); ok && now >= t {
		c.fec.send.takeOverdue(t - c.fec.send.loss.overdue.slack)
	}
}

// onOverdueResult tunes the slack of the overdue deadline from the fate
// of the last take's oldest source in res, acknowledged at now or lost.
func (c *Conn) onOverdueResult(now time.Duration, res *recovery.Result) {
	w := &c.fec.send.loss.overdue
	if !w.hasCanary {
		return
	}
	if containsPacket(res.Acked, w.canary) {
		w.onCanaryAcked(now, probeTimeout(c.sender.RTT()))
	} else if containsPacket(res.Lost, w.canary) || containsPacket(res.Recovered, w.canary) {
		w.onCanaryLost()
	}
}
