package recovery

import "time"

// The bounds of BBR's model (draft-ietf-ccwg-bbr section 5.5.10): the loss
// rate and ECN marks above their thresholds set inflight_hi, the volume
// the path is known to bear; any loss or mark in a round trip outside a
// probe cuts bw_lo and inflight_lo, the short-term bounds, by Beta.

// isInflightTooHigh is IsInflightTooHigh: the sample's losses since its
// packet was sent exceed LossThresh of the data then in flight, or the
// round just ended had more than ECNThresh of its packets marked CE.
func (b *bbr) isInflightTooHigh(s *bbrSample) bool {
	if s.txInFlight > 0 && float64(s.lost) > float64(s.txInFlight)*b.cfg.LossThresh {
		return true
	}
	return b.lossRoundStart && b.lastRound.ceRatio(b.mds) > b.cfg.ECNThresh
}

// checkInflightTooHigh is CheckInflightTooHigh: a probe's samples that
// show too much loss set inflight_hi and end the probe.
func (b *bbr) checkInflightTooHigh(now time.Duration, s *bbrSample) bool {
	if !b.isInflightTooHigh(s) {
		return false
	}
	if b.bwProbeSamples {
		b.handleInflightTooHigh(now, s)
	}
	return true
}

// handleInflightTooHigh is BBRHandleInflightTooHigh.
func (b *bbr) handleInflightTooHigh(now time.Duration, s *bbrSample) {
	b.bwProbeSamples = false
	if !s.appLimited {
		b.inflightHi = max(s.txInFlight, int64(float64(b.targetInflight())*b.cfg.Beta))
	}
	if b.state == BBRProbeBWUp {
		b.startProbeBWDown(now)
	}
}

// adaptUpperBounds is BBRAdaptUpperBounds (section 5.5.10.2): the probe's
// feedback starts a round after it; a round after the probe stopped, the
// bandwidth filter moves to a new cycle; a sample with a safe loss rate
// raises inflight_hi to its volume, and in UP keeps raising it.
func (b *bbr) adaptUpperBounds(now time.Duration, s *bbrSample) {
	if b.ackPhase == acksProbeStarting && b.roundStart {
		b.ackPhase = acksProbeFeedback
	}
	if b.ackPhase == acksProbeStopping && b.roundStart {
		if b.isInProbeBW() && !s.appLimited {
			b.advanceMaxBwFilter()
		}
		b.ackPhase = acksInit
	}
	if b.checkInflightTooHigh(now, s) {
		return
	}
	if b.inflightHi == unsetBytes {
		return
	}
	if s.txInFlight > b.inflightHi {
		b.inflightHi = s.txInFlight
	}
	if b.state == BBRProbeBWUp {
		b.probeInflightHiUpward(s)
	}
}

// adaptLowerBoundsFromCongestion is BBRAdaptLowerBoundsFromCongestion,
// run once per loss round: outside a probe, a round with loss or CE marks
// cuts bw_lo and inflight_lo to Beta of their value, but not below what
// the round delivered.
//
// Unlike the draft, a round whose losses stay within LossThresh of its
// data, without a CE mark, is no congestion here (roundCongested), as for
// the recovery period (onLosses): on a path that loses packets at random
// every round trip has a loss, and the draft's rule cut bw_lo round after
// round. Over geo-lossy (250 Mbit/s, 1% random loss) the bandwidth the
// model used fell from 250 to 175 and 128 Mbit/s in two round trips of
// CRUISE and came back only at the next REFILL (bench download --virtual,
// 100 MB without FEC, seed 1, run 2).
func (b *bbr) adaptLowerBoundsFromCongestion() {
	if b.isProbingBw() || !b.lossInRound || !b.roundCongested() {
		return
	}
	if b.bwLo == unsetRate {
		b.bwLo = b.maxBw
	}
	if b.inflightLo == unsetBytes {
		b.inflightLo = int64(b.cwnd)
	}
	b.bwLo = max(b.bwLatest, uint64(b.cfg.Beta*float64(b.bwLo)))
	b.inflightLo = max(b.inflightLatest, int64(b.cfg.Beta*float64(b.inflightLo)))
}

// resetLowerBounds is BBRResetLowerBounds.
func (b *bbr) resetLowerBounds() {
	b.bwLo = unsetRate
	b.inflightLo = unsetBytes
}

// inflightWithHeadroom is BBRInflightWithHeadroom: inflight_hi less
// Headroom of it (at least a packet), leaving room for other flows.
func (b *bbr) inflightWithHeadroom() int64 {
	if b.inflightHi == unsetBytes {
		return unsetBytes
	}
	headroom := max(int64(b.mds), int64(b.cfg.Headroom*float64(b.inflightHi)))
	return max(b.inflightHi-headroom, int64(b.minPipeCwnd()))
}

// roundCongested reports whether the loss round just ended showed
// congestion: a loss rate above LossThresh, or a packet marked CE.
func (b *bbr) roundCongested() bool {
	r := &b.lastRound
	return r.cePackets > 0 || r.lossRate() > b.cfg.LossThresh
}
