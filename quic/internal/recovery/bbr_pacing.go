package recovery

import "time"

// maxSendQuantum is the draft's 64 KB cap on the send quantum.
const maxSendQuantum = 64 << 10

// initPacingRate is BBRInitPacingRate (section 5.6.2): StartupPacingGain
// times the initial window over 1 ms, the draft's stand-in for a smoothed
// RTT the connection does not have yet.
func (b *bbr) initPacingRate() {
	nominal := float64(b.initialCwnd) / time.Millisecond.Seconds()
	b.pacingRate = uint64(b.cfg.StartupPacingGain * nominal)
}

// setPacingRate is BBRSetPacingRate.
func (b *bbr) setPacingRate() { b.setPacingRateWithGain(b.pacingGain) }

// setPacingRateWithGain is BBRSetPacingRateWithGain: gain x bw, PacingMargin
// below; before the pipe is found full the rate only grows.
func (b *bbr) setPacingRateWithGain(gain float64) {
	rate := uint64(gain * float64(b.bw) * (1 - b.cfg.PacingMargin))
	if rate == 0 {
		return
	}
	if b.fullBwReached || rate > b.pacingRate {
		b.pacingRate = rate
	}
}

// setSendQuantum is BBRSetSendQuantum (section 5.6.3): a millisecond of
// the pacing rate, between two packets and 64 KB.
func (b *bbr) setSendQuantum() {
	q := int(min(bytesIn(b.pacingRate, time.Millisecond), maxSendQuantum))
	b.quantum = max(q, 2*b.mds)
}

// quantizationBudget is BBRQuantizationBudget: room for the send quanta
// the sender and receiver offload, for the minimum window, and in UP for
// two packets more.
func (b *bbr) quantizationBudget(inflight int64) int64 {
	inflight = max(inflight, 3*int64(b.quantum), int64(b.minPipeCwnd()))
	if b.state == BBRProbeBWUp {
		inflight += 2 * int64(b.mds)
	}
	return inflight
}

// inflightFor is BBRInflight: gain x the bandwidth-delay product of bw,
// with the quantization budget.
func (b *bbr) inflightFor(bw uint64, gain float64) int64 {
	return b.quantizationBudget(b.bdpMultiple(bw, gain))
}

// maxInflight is BBRUpdateMaxInflight: cwnd_gain x BDP plus the ACK
// aggregation estimate, with the quantization budget.
func (b *bbr) maxInflight() int64 {
	inflight := b.bdpMultiple(b.bw, b.cwndGain) + b.extraAcked.best(b.roundCount)
	return b.quantizationBudget(inflight)
}

// setCwnd is BBRSetCwnd (section 5.6.4): the window grows by what is
// acknowledged up to max_inflight (without a cap before the pipe is
// full and the first window delivered), and is bounded by ProbeRTT and by
// the model's bounds.
func (b *bbr) setCwnd(newlyAcked int64) {
	target := b.maxInflight()
	if b.packetConservation {
		b.cwnd = max(b.cwnd, int(min(b.inflight+newlyAcked, int64(b.maxWindow))))
	} else {
		cwnd := int64(b.cwnd)
		switch {
		case b.fullBwReached:
			cwnd = min(cwnd+newlyAcked, target)
		case cwnd < target || b.delivered < int64(b.initialCwnd):
			cwnd += newlyAcked
		}
		b.cwnd = int(min(cwnd, int64(b.maxWindow)))
	}
	b.cwnd = max(b.cwnd, b.minPipeCwnd())
	b.boundCwndForProbeRTT()
	b.boundCwndForModel()
}

// boundCwndForProbeRTT is BBRBoundCwndForProbeRTT.
func (b *bbr) boundCwndForProbeRTT() {
	if b.state == BBRProbeRTT {
		b.cwnd = int(min(int64(b.cwnd), b.probeRTTCwnd()))
	}
}

// boundCwndForModel is BBRBoundCwndForModel: inflight_hi outside CRUISE
// and ProbeRTT, inflight_hi less the headroom in them, and inflight_lo.
func (b *bbr) boundCwndForModel() {
	limit := unsetBytes
	switch {
	case b.isInProbeBW() && b.state != BBRProbeBWCruise:
		limit = b.inflightHi
	case b.state == BBRProbeRTT || b.state == BBRProbeBWCruise:
		limit = b.inflightWithHeadroom()
	}
	limit = min(limit, b.inflightLo)
	limit = max(limit, int64(b.minPipeCwnd()))
	b.cwnd = int(min(int64(b.cwnd), limit))
}

// onLosses is the draft's loss response in the window (section
// 5.6.4.4), run on the ACK after the losses it revealed: the first loss
// of a recovery period saves the window and lets only what is
// acknowledged be sent for a round trip (packet conservation); each loss
// in the period takes its bytes off the window.
//
// A recovery period starts only when the sample's loss rate is too high
// (isInflightTooHigh), a departure from the draft, which starts one on any
// loss: on a path that loses packets at random (1% over a satellite link)
// every round trip has a loss, so the window was held by packet
// conservation in every other round trip and never grew, while the draft's
// model (LossThresh) deems such a loss rate no congestion.
func (b *bbr) onLosses(now time.Duration, s *bbrSample) {
	lost := b.pendingLoss
	b.pendingLoss = 0
	if lost == 0 {
		return
	}
	if b.inRecovery {
		b.cwnd = max(b.cwnd-int(lost), b.mds)
		return
	}
	if !b.isInflightTooHigh(s) {
		return
	}
	b.saveCwnd()
	b.inRecovery = true
	b.packetConservation = true
	b.recoveryStart = now
	b.recoveries++
	b.cwnd = max(int(b.inflight)+max(int(s.newlyAcked), b.mds), b.minPipeCwnd())
}

// updateRecovery ends the recovery period when a packet sent after it
// began is acknowledged: the window comes back to its value before it.
func (b *bbr) updateRecovery(ev *AckEvent) {
	if !b.inRecovery {
		return
	}
	for i := range ev.Acked {
		if p := &ev.Acked[i]; p.InFlight && p.TimeSent > b.recoveryStart {
			b.inRecovery = false
			b.packetConservation = false
			b.restoreCwnd()
			return
		}
	}
}
