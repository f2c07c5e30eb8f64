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
//   - Safe Retreat (resumeRetreat): BBR drops the probe and goes back to
//     what its model knew before the jump, the Startup of the
//     Reconnaissance Phase, with its window held at the one it had before
//     the jump until Careful Resume ends.
//   - The end (resumeDone): when the jump was validated, the unvalidated
//     packets having been delivered without congestion after the sender
//     filled the probe's window, the path carries the probe rate, which
//     enters the bandwidth filter as a sample; Startup goes on from it,
//     probing above it as usual. After a retreat, or a jump the
//     application did not use (rate limited), nothing enters the model.

// bbrResume is BBR's Careful Resume state.
type bbrResume struct {
	// active from resumeProbe to resumeDone; retreated once Safe
	// Retreat began.
	active, retreated bool
	// rate is the probe rate (bytes per second).
	rate uint64
	// used: the sender filled the probe's window.
	used bool
	// until is the delivered count below which a sample's packet was
	// sent while resuming.
	until int64
	// priorCwnd is the window before the jump, which Safe Retreat
	// holds.
	priorCwnd int
}

// resumeProbe is resumeDriven's Unvalidated Phase.
func (b *bbr) resumeProbe(_ time.Duration, rate uint64) {
	b.res = bbrResume{active: true, rate: rate, priorCwnd: b.cwnd}
	// The saved state replaces the first flight's measurement.
	b.lr.flight.stop()
	b.pacingRate = rate
	if b.minRTT > 0 {
		b.cwnd = int(min(max(int64(b.cwnd), bytesIn(rate, b.minRTT)), int64(b.maxWindow)))
	}
}

// resumeRetreat is resumeDriven's Safe Retreat: the probe ends and the
// window and pacing rate are the model's again, the model being what the
// Reconnaissance Phase measured.
func (b *bbr) resumeRetreat(time.Duration) {
	if !b.res.active {
		return
	}
	b.res.retreated = true
	b.cwnd = min(b.cwnd, b.res.priorCwnd)
	b.pacingRate = b.modelPacingRate()
}

// resumeDone is resumeDriven's end of Careful Resume: the samples of the
// packets sent so far stay discarded, and a validated probe rate enters
// the bandwidth filter.
func (b *bbr) resumeDone(time.Duration) {
	if !b.res.active {
		return
	}
	b.res.active = false
	b.res.until = b.delivered + b.inflight
	if !b.res.retreated && b.res.used {
		b.addBwSample(b.res.rate)
	}
	b.setPacingRate()
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
	if !b.res.active && rs.PriorDelivered >= b.res.until {
		return false
	}
	s := b.sample(rs)
	b.updateRound(&s)
	b.updateMinRTT(now, &s)
	b.pendingLoss = 0
	switch {
	case b.res.active && b.res.retreated:
		b.cwnd = max(min(b.cwnd, b.res.priorCwnd), b.minPipeCwnd())
	case !b.res.active:
		b.updateControlParameters(now, rs)
	}
	return true
}

// resumeOnSent notes a probe whose window the sender filled.
func (b *bbr) resumeOnSent() {
	if b.res.active && !b.res.retreated && b.inflight+int64(b.mds) > int64(b.cwnd) {
		b.res.used = true
	}
}
