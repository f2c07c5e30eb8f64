package recovery

import "time"

// carefulResume is Careful Resume (RFC 9959) as a Controller wrapping the
// connection's controller: the Sender talks to it as to any Controller, and
// it forwards to the inner controller what normal congestion control would
// see, changing the window only where a phase requires it.
//
// With a window-based inner controller (windowResumer: NewReno, CUBIC) the
// window stays the inner controller's, which the phases set: jump_cwnd in
// Unvalidated (whose packets are paced at jump_cwnd per current RTT), the
// flight size in Validating (then grown by the inner slow start),
// PipeSize/2 in Safe Retreat; Validating ends in congestion avoidance
// (validated). ACKs in Unvalidated and Safe Retreat are not forwarded,
// since the window must not grow there (sections 3.3 and 3.5); congestion
// signals in Unvalidated, Validating and Safe Retreat are the wrapper's to
// answer, and so is a queue that the unvalidated packets' RTT samples show
// (queueBuilt).
//
// A controller that applies Careful Resume to its own model (resumeDriven:
// BBR, RFC 9959 appendix B, probing at half the saved bottleneck
// bandwidth) sees every event; the wrapper only decides the phases and
// tells it when probing starts, retreats and ends.
type carefulResume struct {
	inner  Controller
	win    windowResumer
	driven resumeDriven
	rtt    *RTTStats
	stats  *Stats

	cfg     *Config
	saved   ResumeState
	phase   ResumePhase
	mds     int
	maxJump int64

	// ready: the path is confirmed (the initial data acknowledged, the
	// RTT consistent with saved_rtt, no congestion); the jump waits for
	// the sender to fill the inner window (section 3.2: the transition
	// may be deferred until more data is sent than normal congestion
	// control permits).
	ready bool
	// initialData is the bytes of the initial data (section 3.2): those
	// sent before the first RTT sample, or, for a state that arrived
	// later, all those sent before it arrived. The path is confirmed once
	// that much is delivered. It may be less than an initial window: a
	// server whose client's address is not validated sends its first
	// flight within three times what it received (RFC 9000 section 8.1),
	// about 9.6 kB of handshake against a 12 kB window.
	initialData int64
	// windowSufficed: Careful Resume ended in Reconnaissance because the
	// window normal congestion control allows already reached jump_cwnd,
	// so the jump had nothing to add (qlog's congestion_window_limited).
	windowSufficed bool
	// jump is jump_cwnd and pipeSize PipeSize, in bytes.
	jump     int64
	pipeSize int64
	// unvalidatedAt is when the Unvalidated Phase began.
	unvalidatedAt time.Duration
	// queueFloor is the least RTT increase that counts as a queue the
	// jump built, and queueRun the consecutive RTT samples that showed
	// one (queueBuilt).
	queueFloor time.Duration
	queueRun   int
	// firstUnvalidated and lastUnvalidated are the first and the last
	// 1-RTT packet numbers sent in the Unvalidated Phase (hasFirst: one
	// was sent). lastSent is the newest 1-RTT packet number sent, and
	// sending the space and number of the packet being sent.
	firstUnvalidated, lastUnvalidated uint64
	hasFirst                          bool
	lastSent                          uint64
	sendingSpace                      Space
	sendingNumber                     uint64
}

// windowResumer is what Careful Resume needs of a window-based controller
// (windowBase: NewReno and CUBIC).
type windowResumer interface {
	// resumeSetWindow sets the window without a congestion response, and
	// ends the accelerated first slow start (longrtt.go), whose growth
	// and jump the saved state replaces. Slow start continues.
	resumeSetWindow(cwnd int)
	// resumeRetreat is Safe Retreat's reduction at now: the window
	// becomes cwnd and a recovery period begins (RFC 9002 section
	// 7.3.2), so losses of packets already sent do not reduce it again.
	resumeRetreat(now time.Duration, cwnd int)
	// resumeSetSSThresh sets the slow start threshold on leaving Safe
	// Retreat.
	resumeSetSSThresh(ssthresh int)
}

// resumeDriven is implemented by a controller that applies Careful Resume
// to its own model instead of having its window set (BBR: RFC 9959
// appendix B). Every event still reaches it.
type resumeDriven interface {
	// resumeProbe starts the Unvalidated Phase: probe at rate bytes per
	// second (half the saved bottleneck bandwidth, at most max_jump per
	// saved RTT) and treat rate samples as taken while resuming. saved
	// is the saved bandwidth itself, saved_cwnd per saved_rtt.
	resumeProbe(now time.Duration, rate, saved uint64)
	// resumeCongested reports whether a congestion signal while
	// resuming (Unvalidated or Validating) is congestion by the
	// controller's own measure, which calls for Safe Retreat (RFC 9959
	// sections 3.3 and 3.4 leave to the congestion controller what it
	// counts as congestion). BBR: an ECN-CE mark, or losses above its
	// loss threshold of the data sent since the jump; random loss
	// below it is not congestion for BBR (bbr_bounds.go), and must not
	// undo the jump.
	resumeCongested(ev *CongestionEvent) bool
	// resumeRetreat is Safe Retreat with the window cwnd, PipeSize/2
	// (section 3.5): BBR holds that window and paces it per round trip
	// until Careful Resume ends.
	resumeRetreat(now time.Duration, cwnd int)
	// resumeValidating starts the Validating Phase, where the window
	// may grow as normal congestion control grows it (section 3.4).
	resumeValidating(now time.Duration)
	// resumeDone ends Careful Resume: samples are the path's again.
	resumeDone(now time.Duration)
}

// rttFactorPathChange: a minimum RTT more than ten times saved_rtt
// indicates a path change (RFC 9959 section 4.2.1).
const rttFactorPathChange = 10

// newCarefulResume wraps inner, or returns nil if inner supports neither
// way of resuming.
func newCarefulResume(inner Controller, cfg *Config, rtt *RTTStats, stats *Stats) *carefulResume {
	cr := &carefulResume{
		inner:   inner,
		rtt:     rtt,
		stats:   stats,
		cfg:     cfg,
		mds:     cfg.MaxDatagramSize,
		maxJump: int64(cfg.MaxWindow),
		// HyStart++'s largest RTT threshold (RFC 9406 section 4.3):
		// on a short path, jitter below it is no queue.
		queueFloor: max(cfg.HyStart.MaxRTTThresh, 16*time.Millisecond),
	}
	if j := cfg.CarefulResume.MaxJump; j > 0 {
		cr.maxJump = int64(min(j, cfg.MaxWindow))
	}
	cr.driven, _ = inner.(resumeDriven)
	if cr.driven == nil {
		cr.win, _ = inner.(windowResumer)
		if cr.win == nil {
			return nil
		}
	}
	return cr
}

// iw and minWin are the initial and minimum windows (RFC 9002 section 7.2)
// for the current datagram size.
func (c *carefulResume) iw() int     { return c.cfg.initialWindow(c.mds) }
func (c *carefulResume) minWin() int { return c.cfg.minWindow(c.mds) }

// jumpWindow is jump_cwnd = min(max_jump, saved_cwnd/2) (section 3.3).
func (c *carefulResume) jumpWindow(st ResumeState) int64 {
	return min(c.maxJump, st.SavedCwnd/2)
}

// usable reports whether st would raise the window above what it is.
func (c *carefulResume) usable(st ResumeState) bool {
	return c.jumpWindow(st) > int64(c.inner.Window())
}

// pathConfirmed applies section 4.2.1 to the minimum RTT measured so far:
// at most half saved_rtt, or more than ten times it, is another path.
func (c *carefulResume) pathConfirmed(rtt *RTTStats, st ResumeState) bool {
	if !rtt.HasSample() {
		return true
	}
	m := rtt.MinRTT()
	return m > st.SavedRTT/2 && m <= rttFactorPathChange*st.SavedRTT
}

// enter moves to phase p and counts it.
func (c *carefulResume) enter(p ResumePhase) {
	c.phase = p
	switch p {
	case ResumeReconnaissance:
		c.stats.ResumeReconnaissance++
	case ResumeUnvalidated:
		c.stats.ResumeUnvalidated++
	case ResumeValidating:
		c.stats.ResumeValidating++
	case ResumeSafeRetreat:
		c.stats.ResumeSafeRetreat++
	case ResumeNormal:
		c.stats.ResumeNormal++
	}
}

// noteSent tells the wrapper the space and number of the in-flight packet
// whose OnPacketSent follows.
func (c *carefulResume) noteSent(space Space, pn uint64) {
	c.sendingSpace, c.sendingNumber = space, pn
	if space == SpaceApplication {
		c.lastSent = pn
	}
}

func (c *carefulResume) OnPacketSent(now time.Duration, bytes int, priorInFlight int64) {
	c.inner.OnPacketSent(now, bytes, priorInFlight)
	flight := priorInFlight + int64(bytes)
	switch c.phase {
	case ResumeReconnaissance:
		if !c.rtt.HasSample() {
			c.initialData += int64(bytes)
		}
		if c.ready && c.windowFull(flight) {
			// This packet was within the normal window: the next
			// one is the first unvalidated packet.
			c.startUnvalidated(now, flight)
		}
	case ResumeUnvalidated:
		c.stats.ResumeUnvalidatedBytes += uint64(bytes)
		if c.sendingSpace == SpaceApplication {
			if !c.hasFirst {
				c.firstUnvalidated, c.hasFirst = c.sendingNumber, true
			}
		}
		// Section 3.3: the phase ends when the flight size reaches the
		// window (last_unvalidated_packet_sent) or after one RTT
		// (rtt_exceeded).
		if c.windowFull(flight) || c.rttElapsed(now) {
			c.endUnvalidated(now, flight)
		}
	}
}

// windowFull reports whether no further full-size packet fits in the
// window with flight bytes in flight.
func (c *carefulResume) windowFull(flight int64) bool {
	return flight+int64(c.mds) > int64(c.inner.Window())
}

// rttElapsed reports whether more than one current RTT has passed in the
// Unvalidated Phase.
func (c *carefulResume) rttElapsed(now time.Duration) bool {
	return now-c.unvalidatedAt > c.rtt.SmoothedRTT()
}

func (c *carefulResume) OnAck(now time.Duration, ev *AckEvent) {
	switch c.phase {
	case ResumeReconnaissance:
		c.inner.OnAck(now, ev)
		c.reconnoitre(now, ev)
	case ResumeUnvalidated:
		c.pipeSize += ev.AckedBytes
		c.forwardDriven(now, ev)
		if c.queueBuilt(ev) {
			c.retreat(now)
			return
		}
		if c.acksFrom(ev, c.firstUnvalidated, c.hasFirst) || c.rttElapsed(now) {
			c.endUnvalidated(now, ev.BytesInFlight)
		}
	case ResumeValidating:
		c.pipeSize += ev.AckedBytes
		if c.queueBuilt(ev) {
			c.forwardDriven(now, ev)
			c.retreat(now)
			return
		}
		c.inner.OnAck(now, ev)
		if c.acksFrom(ev, c.lastUnvalidated, true) {
			c.validated(now)
		}
	case ResumeSafeRetreat:
		c.pipeSize += ev.AckedBytes
		c.forwardDriven(now, ev)
		if c.acksFrom(ev, c.lastUnvalidated, true) {
			c.leaveRetreat(now)
		}
	default:
		c.inner.OnAck(now, ev)
	}
}

// resumeQueueSamples is how many consecutive RTT samples must show a
// queue before it counts: one late sample is jitter or a delayed ACK, a
// run of them a queue (the long-RTT slow start's rule, longrtt.go).
const resumeQueueSamples = longRTTSamples

// queueBuilt reports whether the RTT samples of the Unvalidated and
// Validating Phases show that the bottleneck no longer carries the jump:
// resumeQueueSamples consecutive samples (less the peer's ACK delay)
// above the minimum RTT by a quarter of it, and at least queueFloor.
// Packets paced at jump_cwnd per RTT see no queue on a path that still
// carries saved_cwnd; on one that carries less than four fifths of the
// jump's rate (two fifths of the saved one), the queue they build exceeds
// a quarter of the RTT within the round trip, and the path's capacity has
// changed. RFC 9959 section 3.3 makes a path
// change seen in the RTT a reason for Safe Retreat in the Unvalidated
// Phase; the samples of the unvalidated packets themselves come back in
// the Validating Phase, so the test applies there too. Waiting for a loss
// instead lets the Validating Phase's slow start double a window the path
// cannot carry for a further round trip (TestModelResumeSafeRetreat).
func (c *carefulResume) queueBuilt(ev *AckEvent) bool {
	if !ev.HasRTTSample {
		return false
	}
	minRTT := ev.RTT.MinRTT()
	if ev.RTT.AdjustedRTT()-minRTT < max(minRTT/4, c.queueFloor) {
		c.queueRun = 0
		return false
	}
	c.queueRun++
	return c.queueRun >= resumeQueueSamples
}

// forwardDriven gives an ACK to a controller that drives its own
// resumption; a window-based one must not grow its window in this phase.
func (c *carefulResume) forwardDriven(now time.Duration, ev *AckEvent) {
	if c.driven != nil {
		c.inner.OnAck(now, ev)
	}
}

// acksFrom reports whether ev acknowledges a 1-RTT packet numbered pn or
// higher.
func (c *carefulResume) acksFrom(ev *AckEvent, pn uint64, valid bool) bool {
	if !valid {
		return false
	}
	for i := len(ev.Acked) - 1; i >= 0; i-- {
		p := &ev.Acked[i]
		if p.Space == SpaceApplication && p.Number >= pn {
			return true
		}
	}
	return false
}

// reconnoitre is the Reconnaissance Phase's handling of an ACK (section
// 3.2): leave if the RTT shows another path; become ready to jump once the
// initial data is acknowledged, and jump if the window is already full.
func (c *carefulResume) reconnoitre(now time.Duration, ev *AckEvent) {
	if !c.pathConfirmed(ev.RTT, c.saved) {
		c.leave(now)
		return
	}
	c.checkReady(now, ev.Delivered, ev.BytesInFlight)
}

// checkReady marks the path confirmed (section 3.2, Path confirmed; section
// 4.2.1) once an RTT sample confirmed saved_rtt and the initial data is
// acknowledged without congestion (congestion has already ended
// Reconnaissance): all of it delivered, or an initial window, the most
// the initial data may be (section 4.2), or nothing left in flight.
// Confirmed, a sender whose window is full jumps at once, and one whose
// window already reaches jump_cwnd has nothing to gain and enters the
// Normal Phase; otherwise the jump waits until more data is sent than
// the window permits.
func (c *carefulResume) checkReady(now time.Duration, delivered, inFlight int64) {
	if c.phase != ResumeReconnaissance || !c.rtt.HasSample() || delivered <= 0 {
		return
	}
	if !c.ready && (delivered >= c.initialData || delivered >= int64(c.iw()) || inFlight == 0) {
		c.ready = true
	}
	if !c.ready {
		return
	}
	if c.jumpWindow(c.saved) <= int64(c.inner.Window()) {
		c.windowSufficed = true
		c.leave(now)
		return
	}
	if c.windowFull(inFlight) {
		c.startUnvalidated(now, inFlight)
	}
}

// startUnvalidated enters the Unvalidated Phase with flight bytes in
// flight (section 3.3): PipeSize is the flight size and the window
// jump_cwnd. A jump no larger than the window leaves Careful Resume (the
// qlog trigger congestion_window_limited).
func (c *carefulResume) startUnvalidated(now time.Duration, flight int64) {
	jump := c.jumpWindow(c.saved)
	if jump <= int64(c.inner.Window()) {
		c.windowSufficed = true
		c.leave(now)
		return
	}
	c.enter(ResumeUnvalidated)
	c.jump, c.pipeSize, c.unvalidatedAt, c.hasFirst, c.queueRun = jump, flight, now, false, 0
	if c.driven != nil {
		c.driven.resumeProbe(now, rateOf(jump, c.saved.SavedRTT), rateOf(c.saved.SavedCwnd, c.saved.SavedRTT))
		return
	}
	c.win.resumeSetWindow(int(jump))
}

// rateOf is bytes per rtt in bytes per second.
func rateOf(bytes int64, rtt time.Duration) uint64 {
	return mulDivSat(uint64(max(bytes, 0)), uint64(time.Second), uint64(max(rtt, time.Nanosecond)))
}

// endUnvalidated ends the Unvalidated Phase with flight bytes in flight
// (section 3.3, Check flight_size): a flight below the initial window or
// within PipeSize did not use the jump, so the window becomes PipeSize (at
// least the initial window) and Careful Resume ends (rate_limited);
// otherwise the window becomes the flight size and the Validating Phase
// waits for the last unvalidated packet.
func (c *carefulResume) endUnvalidated(now time.Duration, flight int64) {
	c.lastUnvalidated = c.lastSent
	if flight < int64(c.iw()) || flight <= c.pipeSize || !c.hasFirst {
		if c.win != nil {
			c.win.resumeSetWindow(int(max(c.pipeSize, int64(c.iw()))))
		}
		c.finish(now)
		return
	}
	if c.win != nil {
		c.win.resumeSetWindow(int(flight))
	}
	c.enter(ResumeValidating)
	if c.driven != nil {
		c.driven.resumeValidating(now)
	}
}

func (c *carefulResume) OnCongestionEvent(now time.Duration, ev *CongestionEvent) {
	switch c.phase {
	case ResumeReconnaissance:
		// Section 3.2: congestion before the jump; normal congestion
		// control answers it.
		c.leave(now)
		c.inner.OnCongestionEvent(now, ev)
	case ResumeUnvalidated, ResumeValidating:
		if ev.Persistent {
			// Section 3.6: persistent congestion ends Careful
			// Resume; the controller collapses as usual.
			c.finish(now)
			c.inner.OnCongestionEvent(now, ev)
			return
		}
		if c.driven != nil {
			// The controller applies the signal to its model and
			// decides whether it is congestion.
			c.inner.OnCongestionEvent(now, ev)
			if c.driven.resumeCongested(ev) {
				c.retreat(now)
			}
			return
		}
		c.retreat(now)
	case ResumeSafeRetreat:
		if ev.Persistent {
			c.finish(now)
			c.inner.OnCongestionEvent(now, ev)
		} else if c.driven != nil {
			c.inner.OnCongestionEvent(now, ev)
		}
	default:
		c.inner.OnCongestionEvent(now, ev)
	}
}

// retreat enters the Safe Retreat Phase (section 3.5): the window becomes
// PipeSize/2 (not below the minimum window, RFC 9002 section 7.2, nor
// above the window in use), and the phase lasts until the last packet
// sent unvalidated is acknowledged.
func (c *carefulResume) retreat(now time.Duration) {
	if c.phase == ResumeUnvalidated {
		c.lastUnvalidated = c.lastSent
	}
	c.enter(ResumeSafeRetreat)
	cwnd := min(max(c.pipeSize/2, int64(c.minWin())), int64(c.inner.Window()))
	if c.driven != nil {
		c.driven.resumeRetreat(now, int(cwnd))
		return
	}
	c.win.resumeRetreat(now, int(cwnd))
}

// leaveRetreat ends the Safe Retreat Phase: the slow start threshold
// becomes PipeSize x Beta, with RFC 9959's default Beta of 1/2, and
// normal congestion control resumes (slow start up to it).
func (c *carefulResume) leaveRetreat(now time.Duration) {
	if c.win != nil {
		c.win.resumeSetSSThresh(int(max(c.pipeSize/2, int64(c.minWin()))))
	}
	c.finish(now)
}

// validated ends the Validating Phase: the unvalidated packets arrived
// without congestion (section 3.4). The window, grown by slow start over
// the Validating Phase, now carries about saved_cwnd per round trip, and
// normal congestion control goes on from it in congestion avoidance
// (ssthresh = cwnd; section 3.7 leaves the threshold to the controller).
// Doubling on from a capacity already measured is the overshoot section
// 4.1 warns of: on the geo path with a buffer of one bandwidth-delay
// product, slow start from there lost 2127 packets where congestion
// avoidance loses none (TestModelResumeGEO); the window itself stays,
// as PipeSize counts only the bytes acknowledged since the jump and is
// about half of it.
func (c *carefulResume) validated(now time.Duration) {
	if c.win != nil {
		c.win.resumeSetSSThresh(c.inner.Window())
	}
	c.finish(now)
}

// leave ends Careful Resume before the jump.
func (c *carefulResume) leave(now time.Duration) {
	c.ready = false
	c.finish(now)
}

// finish enters the Normal Phase.
func (c *carefulResume) finish(now time.Duration) {
	c.enter(ResumeNormal)
	if c.driven != nil {
		c.driven.resumeDone(now)
	}
}

func (c *carefulResume) Window() int { return c.inner.Window() }

// PacingRate is jump_cwnd per current RTT in the Unvalidated Phase
// (sections 3.3 and 4.3: an inter-packet time of current RTT x MPS /
// jump_cwnd), otherwise the inner controller's.
func (c *carefulResume) PacingRate(rtt *RTTStats) uint64 {
	if c.phase == ResumeUnvalidated && c.win != nil {
		return rateOf(c.jump, rtt.SmoothedRTT())
	}
	return c.inner.PacingRate(rtt)
}

func (c *carefulResume) InSlowStart() bool { return c.inner.InSlowStart() }

func (c *carefulResume) SetMaxDatagramSize(n int) {
	if n > 0 {
		c.mds = n
	}
	c.inner.SetMaxDatagramSize(n)
}

func (c *carefulResume) State() ControllerState { return c.inner.State() }
