package recovery

import "time"

// BBR under Careful Resume (RFC 9959, resume_cc.go): BBR implements
// resumeDriven, so the wrapper decides the phases and BBR applies them to
// its own model instead of having its window set.
//
//   - Unvalidated (resumeProbe): BBR paces at the probe rate, half the
//     saved bottleneck bandwidth (jump_cwnd per saved RTT), with a window
//     of that rate's bandwidth-delay product, so that the wrapper sees the
//     window fill at jump_cwnd.
//   - While resuming, and for the packets sent meanwhile, rate samples are
//     discarded: their rate is the probe's, set from a saved state, not a
//     measurement of this path's bottleneck (RFC 9959 section 4.3: the
//     saved state is a hint, not a model). The round trips and the minimum
//     RTT are still tracked.
//   - Congestion (resumeCongested) is what BBR counts as congestion
//     elsewhere (bbr_bounds.go): an ECN-CE mark, or losses above
//     LossThresh (2%) of the data sent since the jump, as
//     IsInflightTooHigh judges a flight. Random loss below that, as a
//     satellite link's 1% that FEC does not rebuild, does not undo the
//     jump: over geo-lossy without FEC, treating the first loss of the
//     9.4 MB unvalidated flight as congestion made 100 MB take 61.8 s
//     against 5.9 s for a cold connection (bench resume --virtual,
//     seed 1).
//   - Safe Retreat (resumeRetreat): BBR drops the probe and holds the
//     window RFC 9959 section 3.5 sets, PipeSize/2 (what the path
//     delivered since the jump, halved), paced at that window per
//     minimum RTT, until Careful Resume ends.
//   - Validating (resumeValidating): the sender filled the probe's window
//     and the path is carrying the unvalidated packets. As soon as their
//     ACKs show that it carries the probe rate (resumeCarried), the window
//     and pacing rate grow as Startup's again, as a window-based
//     controller's grows by slow start in this phase (section 3.4): the
//     probe rate enters the bandwidth filter, Startup expects the saved
//     bandwidth (expectFullBw), and the samples of the packets sent from
//     then on are the model's, while those of the unvalidated packets
//     stay discarded. Held at the probe until the end, the sender spent
//     two round trips at half the saved rate, and over geo a cold
//     connection's first-flight jump overtook it (10 MB in 3.593 s
//     resumed, 3.579 s cold); on a path whose bottleneck fell below the
//     probe the ACKs never show it, and the window stays the probe's
//     until Safe Retreat. Safe Retreat in this phase takes the probe rate
//     back out of the filter.
//   - The end (resumeDone): after a validated jump Startup goes on,
//     probing above the probe rate as usual (the probe rate enters the
//     filter now if the ACKs never showed it). After a retreat the Safe
//     Retreat's rate
//     (PipeSize/2 per minimum RTT, a measurement of this path, halved)
//     enters it instead, as RFC 9959's ssthresh of PipeSize x Beta does
//     for a window-based controller, and Startup probes up from there:
//     going back to the model of the Reconnaissance Phase (an initial
//     window's rate) left the sender at a few tens of packets per round
//     trip, where a single random loss exceeds the 2% threshold and
//     bw_lo and inflight_lo kept it there (13 Mbit/s of 250 on
//     geo-lossy). After a jump the application did not use (rate
//     limited), nothing enters the model.

// bbrResume is BBR's Careful Resume state.
type bbrResume struct {
	// active from resumeProbe to resumeDone; retreated once Safe
	// Retreat began; awaiting from the Validating Phase, with the
	// probe's window used, until a sample shows the path carrying the
	// probe, and validating from then on (startValidatingGrowth).
	active, retreated, awaiting, validating bool
	// rate is the probe rate and saved the saved bandwidth (bytes per
	// second).
	rate, saved uint64
	// used: the sender filled the probe's window.
	used bool
	// until is the delivered count below which a sample's packet was
	// sent while resuming.
	until int64
	// sent and lost are the bytes sent since the jump and those
	// declared lost since (resumeCongested).
	sent, lost int64
	// retreatCwnd is the window Safe Retreat holds, PipeSize/2.
	retreatCwnd int
	// acking: an ACK came in the Validating Phase, the first at ackFrom
	// with ackDelivered delivered (resumeCarried).
	acking       bool
	ackFrom      time.Duration
	ackDelivered int64
	// filter is the bandwidth filter before the probe rate entered it
	// (resumeValidating), which Safe Retreat restores.
	filter [2]uint64
}

// resumeProbe is resumeDriven's Unvalidated Phase.
func (b *bbr) resumeProbe(_ time.Duration, rate, saved uint64) {
	b.res = bbrResume{active: true, rate: rate, saved: saved}
	// The saved state replaces the first flight's measurement.
	b.lr.flight.stop()
	b.pacingRate = rate
	if b.minRTT > 0 {
		b.cwnd = int(min(max(int64(b.cwnd), bytesIn(rate, b.minRTT)), int64(b.maxWindow)))
	}
}

// resumeCongested is resumeDriven's test of a congestion signal while
// resuming: a CE mark, or the losses since the jump above LossThresh of
// what was sent since (IsInflightTooHigh over the resumed flight).
func (b *bbr) resumeCongested(ev *CongestionEvent) bool {
	if ev.Cause == CauseECN {
		return true
	}
	b.res.lost += ev.LostBytes
	return float64(b.res.lost) > b.cfg.LossThresh*float64(b.res.sent)
}

// resumeValidating is resumeDriven's Validating Phase: with the probe's
// window used, the probe rate enters the model, whose window and pacing
// rate apply again.
func (b *bbr) resumeValidating(time.Duration) {
	if !b.res.active || b.res.retreated || !b.res.used {
		return
	}
	b.res.awaiting = true
}

// resumeCarried reports, in the Validating Phase, whether the ACKs of the
// unvalidated packets show the path carrying the probe: since the first
// of them, for at least an eighth of the minimum RTT, they acknowledged
// resumeCarriedShare of the probe rate or more. A bottleneck below the
// probe acknowledges at its own rate, with a queue that grows, and the
// window stays the probe's until Safe Retreat or the end. (The delivery
// rate samples of the first unvalidated packets span the Reconnaissance
// Phase's idle round trip and show a fraction of the rate.)
func (b *bbr) resumeCarried(now time.Duration) bool {
	if !b.res.acking {
		b.res.acking, b.res.ackFrom, b.res.ackDelivered = true, now, b.delivered
		return false
	}
	elapsed := now - b.res.ackFrom
	if elapsed < b.minRTT/8 || elapsed <= 0 {
		return false
	}
	return float64(rateOf(b.delivered-b.res.ackDelivered, elapsed)) >= resumeCarriedShare*float64(b.res.rate)
}

// resumeCarriedShare is the share of the probe rate the ACKs must show
// for the path to carry the probe (resumeCarried).
const resumeCarriedShare = 0.9

// startValidatingGrowth lets the window and pacing rate grow from the
// probe rate as Startup's (section 3.4): the probe rate enters the model,
// Startup expects the saved bandwidth, and the samples of the packets
// sent from now on are the model's, so that it measures the path beyond
// the probe a round trip before the last unvalidated packet is
// acknowledged.
func (b *bbr) startValidatingGrowth() {
	b.res.awaiting, b.res.validating = false, true
	b.res.until = b.delivered + b.inflight
	b.res.filter = b.bwFilter
	b.addBwSample(b.res.rate)
	b.expectFullBw(b.res.saved)
	b.setPacingRate()
}

// resumeRetreat is resumeDriven's Safe Retreat: the probe ends, the probe
// rate leaves the bandwidth filter if Validating had put it there, and
// the window becomes cwnd (PipeSize/2), paced at cwnd per minimum RTT.
func (b *bbr) resumeRetreat(_ time.Duration, cwnd int) {
	if !b.res.active {
		return
	}
	b.res.awaiting = false
	if b.res.validating {
		b.res.validating = false
		b.bwFilter = b.res.filter
		b.maxBw = max(b.bwFilter[0], b.bwFilter[1])
		b.boundBwForModel()
	}
	b.res.retreated = true
	b.res.retreatCwnd = max(cwnd, b.minPipeCwnd())
	b.cwnd = b.res.retreatCwnd
	b.pacingRate = b.retreatRate()
}

// retreatRate is Safe Retreat's window per minimum RTT, or the model's
// pacing rate without an RTT sample.
func (b *bbr) retreatRate() uint64 {
	if b.minRTT <= 0 {
		return b.modelPacingRate()
	}
	return rateOf(int64(b.res.retreatCwnd), b.minRTT)
}

// resumeDone is resumeDriven's end of Careful Resume: the samples of the
// packets sent so far stay discarded, and a validated probe rate, or
// after Safe Retreat its rate, enters the bandwidth filter.
func (b *bbr) resumeDone(time.Duration) {
	if !b.res.active {
		return
	}
	b.res.active = false
	if b.res.validating {
		// The model took the probe rate and the samples of the packets
		// sent since its growth began.
		return
	}
	b.res.until = b.delivered + b.inflight
	switch {
	case b.res.retreated:
		b.addBwSample(b.retreatRate())
		b.expectFullBw(2 * b.retreatRate())
	case b.res.used:
		b.addBwSample(b.res.rate)
		b.expectFullBw(b.res.saved)
	}
	b.setPacingRate()
}

// expectFullBw makes Startup, after a validated jump, expect the saved
// bandwidth: it is what an earlier connection's Startup found full, so it
// becomes full_bw, and two round trips whose max_bw grows less than
// FullBwThresh beyond it end Startup, as after the first flight's
// measurement (countFirstFlightRound). A path now faster than saved
// restarts the count as usual. With the draft's count from the probe
// rate, half the saved one, Startup ran three round trips more at its
// gain and its window of twice the bandwidth-delay product: over
// geo-lossy the transfer ended in Startup behind a queue of a round trip,
// and 100 MB took 6.16 s resumed against 5.92 s cold (without FEC, seed 1).
func (b *bbr) expectFullBw(bw uint64) {
	if b.fullBwReached || b.state != BBRStartup || bw == 0 {
		return
	}
	b.fullBw = bw
	b.fullBwCount = max(b.cfg.FullBwCount-1, 0)
}

// modelPacingRate is the pacing rate of the current gain over the model's
// bandwidth, or the initial one without a bandwidth.
func (b *bbr) modelPacingRate() uint64 {
	if b.bw == 0 {
		return uint64(b.cfg.StartupPacingGain * float64(b.initialCwnd) / time.Millisecond.Seconds())
	}
	return uint64(b.pacingGain * float64(b.bw) * (1 - b.cfg.PacingMargin))
}

// addBwSample puts a rate into the current cycle's slot of the bandwidth
// filter.
func (b *bbr) addBwSample(rate uint64) {
	slot := &b.bwFilter[b.cycleCount%2]
	*slot = max(*slot, rate)
	b.maxBw = max(b.bwFilter[0], b.bwFilter[1])
	b.boundBwForModel()
}

// resumeSample handles an ACK whose sample is discarded, while resuming
// or for a packet sent then: it reports false when the sample is the
// model's to take. Round trips and the minimum RTT go on; the window and
// pacing rate are the probe's while it lasts, the held window in Safe
// Retreat, and the model's once resuming is over.
func (b *bbr) resumeSample(now time.Duration, rs *RateSample) bool {
	if (!b.res.active || b.res.validating) && rs.PriorDelivered >= b.res.until {
		return false
	}
	s := b.sample(rs)
	if b.res.awaiting && !b.res.retreated && b.resumeCarried(now) {
		b.startValidatingGrowth()
	}
	b.updateRound(&s)
	b.updateMinRTT(now, &s)
	// The losses of packets sent while resuming are Careful Resume's to
	// judge (resumeCongested): they do not count toward the loss round,
	// which starts afresh with the model's samples. Counted against no
	// acknowledged bytes, they made the first round after a validated
	// jump over geo-lossy show an 86% loss rate, which ended Startup with
	// inflight_hi at the probe's volume.
	b.round, b.lossInRound = roundSignals{}, false
	b.lossRoundDelivered = b.delivered
	b.pendingLoss = 0
	switch {
	case b.res.active && b.res.retreated:
		b.cwnd = b.res.retreatCwnd
	case !b.res.active || b.res.validating:
		b.updateControlParameters(now, rs)
	}
	return true
}

// resumeOnSent counts what is sent while resuming and notes a probe
// whose window the sender filled.
func (b *bbr) resumeOnSent(bytes int) {
	if !b.res.active {
		return
	}
	b.res.sent += int64(bytes)
	if !b.res.retreated && b.inflight+int64(b.mds) > int64(b.cwnd) {
		b.res.used = true
	}
}
