package recovery

import "time"

// checkProbeRTT is BBRCheckProbeRTT (section 5.3.4.4): when no RTT sample
// has come down to the minimum for ProbeRTTInterval, BBR cuts the data in
// flight to half the bandwidth-delay product for ProbeRTTDuration and a
// round trip, so that the minimum RTT is measured without its own queue.
//
// Unlike the draft, Startup is not interrupted: on a long path it lasts
// longer than ProbeRTTInterval (eight round trips at 600 ms), its own
// queue keeps the RTT samples above the minimum, and a ProbeRTT then
// emptied the pipe only to start Startup again at its full gain over the
// bandwidth already measured. Drain, which follows, empties the queue.
func (b *bbr) checkProbeRTT(now time.Duration, s *bbrSample) {
	if b.state != BBRProbeRTT && b.state != BBRStartup && b.probeRTTExpired && !b.idleRestart {
		b.enterProbeRTT()
		b.saveCwnd()
		b.hasProbeRTTDone = false
		b.ackPhase = acksProbeStopping
		b.startRound()
	}
	if b.state == BBRProbeRTT {
		b.handleProbeRTT(now)
	}
	if s.delivered > 0 {
		b.idleRestart = false
	}
}

// enterProbeRTT is BBREnterProbeRTT.
func (b *bbr) enterProbeRTT() {
	b.state = BBRProbeRTT
	b.pacingGain = 1
	b.cwndGain = b.cfg.ProbeRTTCwndGain
}

// handleProbeRTT is BBRHandleProbeRTT. Samples taken in ProbeRTT, and
// those of packets sent in it, are application limited: the rate is low
// by choice.
func (b *bbr) handleProbeRTT(now time.Duration) {
	b.appLimitedUntil = max(b.appLimitedUntil, b.delivered+b.inflight)
	switch {
	case !b.hasProbeRTTDone && b.inflight <= b.probeRTTCwnd():
		b.probeRTTDone = now + b.cfg.ProbeRTTDuration
		b.hasProbeRTTDone = true
		b.probeRTTRound = false
		b.startRound()
	case b.hasProbeRTTDone:
		if b.roundStart {
			b.probeRTTRound = true
		}
		if b.probeRTTRound {
			b.checkProbeRTTDone(now)
		}
	}
}

// checkProbeRTTDone is BBRCheckProbeRTTDone.
func (b *bbr) checkProbeRTTDone(now time.Duration) {
	if b.hasProbeRTTDone && now > b.probeRTTDone {
		b.probeRTTMinStamp = now
		b.restoreCwnd()
		b.exitProbeRTT(now)
	}
}

// exitProbeRTT is BBRExitProbeRTT: back to ProbeBW's CRUISE, or to
// Startup if the pipe was never found full.
func (b *bbr) exitProbeRTT(now time.Duration) {
	b.resetLowerBounds()
	if b.fullBwReached {
		b.startProbeBWDown(now)
		b.startProbeBWCruise()
		return
	}
	b.enterStartup()
}

// probeRTTCwnd is BBRProbeRTTCwnd.
func (b *bbr) probeRTTCwnd() int64 {
	return max(b.bdpMultiple(b.bw, b.cfg.ProbeRTTCwndGain), int64(b.minPipeCwnd()))
}

// saveCwnd is BBRSaveCwnd: the window to come back to after recovery or
// ProbeRTT.
func (b *bbr) saveCwnd() {
	if !b.inRecovery && b.state != BBRProbeRTT {
		b.priorCwnd = b.cwnd
		return
	}
	b.priorCwnd = max(b.priorCwnd, b.cwnd)
}

// restoreCwnd is BBRRestoreCwnd.
func (b *bbr) restoreCwnd() { b.cwnd = min(max(b.cwnd, b.priorCwnd), b.maxWindow) }
