package recovery

import "time"

// isInProbeBW is IsInAProbeBWState.
func (b *bbr) isInProbeBW() bool {
	return b.state >= BBRProbeBWDown && b.state <= BBRProbeBWUp
}

// isProbingBw is BBRIsProbingBW: the states that push above the estimate,
// where losses are the probe's expected result and do not cut the lower
// bounds.
func (b *bbr) isProbingBw() bool {
	return b.state == BBRStartup || b.state == BBRProbeBWRefill || b.state == BBRProbeBWUp
}

// updateProbeBWCyclePhase is BBRUpdateProbeBWCyclePhase (section
// 5.3.3.6): DOWN until the queue is drained and the wait has passed,
// CRUISE at the estimate, REFILL for a round at the estimate with the
// lower bounds lifted, UP until the bandwidth stops growing or the loss
// rate is too high.
func (b *bbr) updateProbeBWCyclePhase(now time.Duration, s *bbrSample) {
	if !b.fullBwReached {
		return
	}
	b.adaptUpperBounds(now, s)
	if !b.isInProbeBW() {
		return
	}
	switch b.state {
	case BBRProbeBWDown:
		if b.checkTimeToProbeBW(now) {
			return
		}
		if b.checkTimeToCruise() {
			b.startProbeBWCruise()
		}
	case BBRProbeBWCruise:
		b.checkTimeToProbeBW(now)
	case BBRProbeBWRefill:
		// After a round of refill, the probe's samples start.
		if b.roundStart {
			b.bwProbeSamples = true
			b.startProbeBWUp()
		}
	case BBRProbeBWUp:
		if b.checkTimeToGoDown() {
			b.startProbeBWDown(now)
		}
	}
}

// checkTimeToCruise is BBRCheckTimeToCruise.
func (b *bbr) checkTimeToCruise() bool {
	if b.inflight > b.inflightWithHeadroom() {
		return false
	}
	return b.inflight <= b.inflightFor(b.maxBw, 1)
}

// checkTimeToGoDown is BBRCheckTimeToGoDown: UP ends when the bandwidth
// stopped growing; a window held at inflight_hi restarts that count.
func (b *bbr) checkTimeToGoDown() bool {
	if b.isCwndLimited && int64(b.cwnd) >= b.inflightHi {
		b.resetFullBw()
		b.fullBw = b.maxBw
		return false
	}
	return b.fullBwNow
}

// checkTimeToProbeBW is BBRCheckTimeToProbeBW: probe after the random
// wall-clock wait, or after as many round trips as Reno would need to
// grow by the window (at most 63), to coexist with Reno and CUBIC.
func (b *bbr) checkTimeToProbeBW(now time.Duration) bool {
	if now > b.cycleStamp+b.bwProbeWait || b.isRenoCoexistenceProbeTime() {
		b.startProbeBWRefill()
		return true
	}
	return false
}

// isRenoCoexistenceProbeTime is BBRIsRenoCoexistenceProbeTime.
func (b *bbr) isRenoCoexistenceProbeTime() bool {
	renoRounds := uint64(b.targetInflight() / int64(b.mds))
	return b.roundsSinceBwProbe >= min(renoRounds, 63)
}

// targetInflight is BBRTargetInflight.
func (b *bbr) targetInflight() int64 {
	return min(b.bdpMultiple(b.bw, 1), int64(b.cwnd))
}

// pickProbeWait is BBRPickProbeWait: 0 or 1 round, and ProbeWaitBase plus
// up to ProbeWaitRand of wall-clock time.
func (b *bbr) pickProbeWait() {
	b.roundsSinceBwProbe = b.rng.next() & 1
	b.bwProbeWait = b.cfg.ProbeWaitBase + time.Duration(b.rng.float()*float64(b.cfg.ProbeWaitRand))
}

// startProbeBWDown is BBRStartProbeBW_DOWN.
func (b *bbr) startProbeBWDown(now time.Duration) {
	b.resetCongestionSignals()
	b.probeUpCnt = unsetBytes
	b.pickProbeWait()
	b.cycleStamp = now
	b.ackPhase = acksProbeStopping
	b.startRound()
	b.state = BBRProbeBWDown
	b.pacingGain = b.cfg.ProbeDownPacingGain
	b.cwndGain = b.cfg.CwndGain
}

// startProbeBWCruise is BBRStartProbeBW_CRUISE.
func (b *bbr) startProbeBWCruise() {
	b.state = BBRProbeBWCruise
	b.pacingGain = 1
	b.cwndGain = b.cfg.CwndGain
}

// startProbeBWRefill is BBRStartProbeBW_REFILL: the lower bounds are
// lifted so that the probe can find bandwidth they hid.
func (b *bbr) startProbeBWRefill() {
	b.resetLowerBounds()
	b.bwProbeUpRounds = 0
	b.bwProbeUpAcks = 0
	b.ackPhase = acksRefilling
	b.startRound()
	b.state = BBRProbeBWRefill
	b.pacingGain = 1
	b.cwndGain = b.cfg.CwndGain
}

// startProbeBWUp is BBRStartProbeBW_UP.
func (b *bbr) startProbeBWUp() {
	b.ackPhase = acksProbeStarting
	b.startRound()
	b.resetFullBw()
	b.fullBw = b.maxBw
	b.state = BBRProbeBWUp
	b.pacingGain = b.cfg.ProbeUpPacingGain
	b.cwndGain = b.cfg.ProbeUpCwndGain
	b.raiseInflightHiSlope()
}

// raiseInflightHiSlope is BBRRaiseInflightHiSlope: inflight_hi grows by
// 1, 2, 4... packets per round trip of probing.
func (b *bbr) raiseInflightHiSlope() {
	growth := int64(1) << b.bwProbeUpRounds
	b.bwProbeUpRounds = min(b.bwProbeUpRounds+1, 30)
	b.probeUpCnt = max(int64(b.cwnd/b.mds)/growth, 1)
}

// probeInflightHiUpward is BBRProbeInflightHiUpward: while the window is
// the limit, one packet more of inflight_hi per probeUpCnt packets
// acknowledged.
func (b *bbr) probeInflightHiUpward(s *bbrSample) {
	if !b.isCwndLimited || int64(b.cwnd) < b.inflightHi {
		return
	}
	b.bwProbeUpAcks += s.newlyAcked
	step := b.probeUpCnt * int64(b.mds)
	if b.bwProbeUpAcks >= step {
		delta := b.bwProbeUpAcks / step
		b.bwProbeUpAcks -= delta * step
		b.inflightHi += delta * int64(b.mds)
	}
	if b.roundStart {
		b.raiseInflightHiSlope()
	}
}

// handleRestartFromIdle is BBRHandleRestartFromIdle (section 5.4.4): after
// an idle period the sender paces at the estimate, not below it.
func (b *bbr) handleRestartFromIdle(now time.Duration) {
	b.idleRestart = true
	b.extraAckedStart = now
	switch b.state {
	case BBRProbeBWDown, BBRProbeBWCruise, BBRProbeBWRefill, BBRProbeBWUp:
		b.setPacingRateWithGain(1)
	case BBRProbeRTT:
		b.checkProbeRTTDone(now)
	}
}
