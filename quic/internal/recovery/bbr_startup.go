package recovery

import "time"

// enterStartup is BBREnterStartup (section 5.3.1.1).
func (b *bbr) enterStartup() {
	b.state = BBRStartup
	b.pacingGain = b.cfg.StartupPacingGain
	b.cwndGain = b.cfg.StartupCwndGain
}

// resetFullBw is BBRResetFullBW.
func (b *bbr) resetFullBw() {
	b.fullBw = 0
	b.fullBwCount = 0
	b.fullBwNow = false
}

// checkFullBwReached is BBRCheckFullBWReached (section 5.3.1.2): the pipe
// is full once max_bw has grown less than FullBwThresh-fold in FullBwCount
// consecutive round trips that were not application limited. It runs in
// Startup and again in ProbeBW_UP, whose end it decides.
func (b *bbr) checkFullBwReached(s *bbrSample) {
	if b.fullBwNow || s.appLimited || !b.roundStart {
		return
	}
	if float64(b.maxBw) >= float64(b.fullBw)*b.cfg.FullBwThresh {
		b.resetFullBw()
		b.fullBw = b.maxBw
		return
	}
	b.fullBwCount++
	b.fullBwNow = b.fullBwCount >= b.cfg.FullBwCount
	if b.fullBwNow {
		b.fullBwReached = true
	}
}

// checkStartupDone is BBRCheckStartupDone.
func (b *bbr) checkStartupDone() {
	b.checkStartupHighLoss()
	if b.state == BBRStartup && b.fullBwReached {
		b.enterDrain()
	}
}

// checkStartupHighLoss is BBRCheckStartupHighLoss (section 5.3.1.3): a
// round trip with at least StartupFullLossCount loss events and a loss
// rate above LossThresh, or with more than ECNThresh of its packets
// marked CE, ends Startup with inflight_hi at the volume the path
// delivered.
func (b *bbr) checkStartupHighLoss() {
	if b.fullBwReached || b.state != BBRStartup || !b.lossRoundStart {
		return
	}
	r := &b.lastRound
	lossy := r.lossEvents >= b.cfg.StartupFullLossCount && r.lossRate() > b.cfg.LossThresh
	if !lossy && r.ceRatio(b.mds) <= b.cfg.ECNThresh {
		return
	}
	b.inflightHi = max(b.bdpMultiple(b.maxBw, 1), b.inflightLatest)
	b.fullBwReached = true
}

// enterDrain is BBREnterDrain (section 5.3.2).
func (b *bbr) enterDrain() {
	b.state = BBRDrain
	b.pacingGain = b.cfg.DrainPacingGain
	b.cwndGain = b.cfg.StartupCwndGain
}

// checkDrainDone is BBRCheckDrainDone: Drain ends when the data in flight
// is down to the estimated bandwidth-delay product.
func (b *bbr) checkDrainDone(now time.Duration) {
	if b.state == BBRDrain && b.inflight <= b.inflightFor(b.bw, 1) {
		b.startProbeBWDown(now)
	}
}
