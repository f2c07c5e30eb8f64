package recovery

import "time"

// The windowResumer methods of NewReno and CUBIC (resume_cc.go).

// stopLongRTT ends the accelerated first slow start: its scaled growth,
// its hold and its first-flight jump would otherwise act on a window that
// Careful Resume set from the saved state.
func (w *windowBase) stopLongRTT() {
	w.lr.active, w.lr.holding = false, false
	w.lr.flight.stop()
}

func (w *windowBase) resumeSetWindow(cwnd int) {
	w.stopLongRTT()
	w.setWindow(int64(cwnd))
}

// resumeRetreat is a reduction like reduce's: one per recovery period,
// starting now. The window is held (ssthresh = cwnd) until Safe Retreat
// ends and sets the threshold.
func (w *windowBase) resumeRetreat(now time.Duration, cwnd int) {
	w.stopLongRTT()
	w.hs.onCongestion()
	w.recoveryStart, w.recoveryValid, w.inRecovery = now, true, true
	w.reductions++
	w.setWindow(int64(cwnd))
	w.ssthresh = w.cwnd
}

func (w *windowBase) resumeSetSSThresh(ssthresh int) {
	w.ssthresh = max(ssthresh, w.minWindow())
}

// CUBIC keeps its window as a float, and restarts its congestion
// avoidance stage from the window Careful Resume leaves: W_max is unknown
// (RFC 9438 section 4.8's rule for an undefined W_max applies).
func (c *cubic) resumeSetWindow(cwnd int) {
	c.windowBase.resumeSetWindow(cwnd)
	c.cwndF = float64(c.cwnd)
}

func (c *cubic) resumeRetreat(now time.Duration, cwnd int) {
	c.windowBase.resumeRetreat(now, cwnd)
	c.cwndF = float64(c.cwnd)
	c.wMax, c.cwndPrior, c.hasEpoch = 0, 0, false
}
