package recovery

import "time"

// windowBase is what the window-based controllers (NewReno, CUBIC) share:
// the window and slow start threshold, slow start with HyStart++, the
// recovery period that limits reductions to one per round trip, and the
// pacing rate derived from the window (RFC 9002 section 7 and appendix B).
type windowBase struct {
	algorithm Algorithm
	cwnd      int
	ssthresh  int
	mds       int
	minPkts   int
	maxWindow int

	// recoveryStart is congestion_recovery_start_time; recoveryValid is
	// false before the first reduction and after persistent congestion,
	// where the RFC sets the time to 0.
	recoveryStart time.Duration
	recoveryValid bool
	// inRecovery is true from a reduction until a packet sent after it is
	// acknowledged (section 7.3.2).
	inRecovery bool
	reductions uint64
	appLimited bool
	use        windowUse

	hs           hystart
	lr           longRTT
	pacingFactor float64
}

func newWindowBase(cfg *Config, alg Algorithm) windowBase {
	return windowBase{
		algorithm:    alg,
		cwnd:         cfg.initialWindow(cfg.MaxDatagramSize),
		ssthresh:     InfiniteSSThresh,
		mds:          cfg.MaxDatagramSize,
		minPkts:      cfg.MinWindowPackets,
		maxWindow:    cfg.MaxWindow,
		hs:           newHystart(cfg.HyStart, !cfg.Pacing.Disabled),
		lr:           newLongRTT(cfg),
		pacingFactor: cfg.Pacing.Factor,
	}
}

func (w *windowBase) minWindow() int { return w.minPkts * w.mds }

func (w *windowBase) Window() int { return w.cwnd }

func (w *windowBase) InSlowStart() bool { return w.cwnd < w.ssthresh }

func (w *windowBase) SetMaxDatagramSize(n int) {
	if n <= 0 {
		return
	}
	w.mds = n
	w.cwnd = min(max(w.cwnd, w.minWindow()), w.maxWindow)
}

// PacingRate is N * cwnd / smoothed_rtt (RFC 9002 section 7.7), with N
// raised to 1+f in the long-RTT slow start, and the measured bottleneck
// rate in the round trip after its exit (longRTT).
func (w *windowBase) PacingRate(rtt *RTTStats) uint64 {
	if w.lr.holding {
		return w.lr.holdRate
	}
	if g := w.lr.pacingGain(rtt); g > 0 && w.InSlowStart() {
		return windowRate(w.cwnd, rtt.SmoothedRTT(), g)
	}
	return windowRate(w.cwnd, rtt.SmoothedRTT(), w.pacingFactor)
}

func windowRate(cwnd int, srtt time.Duration, factor float64) uint64 {
	if srtt <= 0 {
		srtt = time.Nanosecond
	}
	if factor < 1 {
		factor = 1
	}
	return uint64(float64(cwnd) * factor * float64(time.Second) / float64(srtt))
}

// inCongestionRecovery is appendix B.5's InCongestionRecovery: a packet
// sent before the current recovery period began.
func (w *windowBase) inCongestionRecovery(sentTime time.Duration) bool {
	return w.recoveryValid && sentTime <= w.recoveryStart
}

// growable sums the acknowledged in-flight bytes that may grow the window:
// not sent before the recovery period (appendix B.5), not sent while
// application limited with the window underused (section 7.8, windowUse).
// The acknowledgement of a packet sent after the recovery period began
// ends the period.
func (w *windowBase) growable(now time.Duration, ev *AckEvent) int64 {
	var n int64
	eligible, limited := false, true
	used := w.use.used(w.cwnd, w.mds, w.InSlowStart())
	var largestSent time.Duration
	for i := range ev.Acked {
		p := &ev.Acked[i]
		if !p.InFlight {
			continue
		}
		if w.inCongestionRecovery(p.TimeSent) {
			continue
		}
		w.inRecovery = false
		if w.lr.holding && p.TimeSent > w.lr.exitTime {
			w.endHold()
		}
		eligible = true
		largestSent = max(largestSent, p.TimeSent)
		if p.AppLimited && !used {
			continue
		}
		limited = false
		n += int64(p.Bytes)
	}
	if eligible {
		w.appLimited = limited
		w.use.onAck(now, largestSent)
	}
	return n
}

// onSent records a packet sent at now with priorInFlight bytes already in
// flight, for the window-use test (windowUse) and the first flight.
func (w *windowBase) onSent(now time.Duration, bytes int, priorInFlight int64) {
	w.use.onSent(priorInFlight + int64(bytes))
	w.lr.flight.onSent(now, bytes)
}

// slowStart grows the window in slow start: on a long-RTT path with the
// accelerated slow start (longRTT), otherwise as RFC 9002 with HyStart++,
// which may slow the growth or end slow start.
func (w *windowBase) slowStart(now time.Duration, ev *AckEvent, n int64) {
	if f := w.lr.factor(ev.RTT); f > 1 {
		w.longRTTSlowStart(now, ev, n, f)
		return
	}
	// A shorter minimum RTT than before (a new path): RFC 9002's slow
	// start from here on.
	w.lr.used = false
	grow, exit := w.hs.onAck(ev, n, w.mds)
	if exit {
		w.ssthresh = w.cwnd
		return
	}
	w.setWindow(int64(w.cwnd) + grow)
}

// longRTTSlowStart is slowStart on a long-RTT path, with growth factor f.
func (w *windowBase) longRTTSlowStart(now time.Duration, ev *AckEvent, n int64, f float64) {
	if iw := w.lr.initialWindow(w.mds, f); iw > int64(w.cwnd) {
		w.setWindow(iw)
	}
	grow, exit := w.lr.onAck(now, ev, n, w.mds, w.cwnd, f)
	if !exit {
		w.setWindow(int64(w.cwnd) + grow)
		return
	}
	w.hs.onCongestion()
	if w.lr.target == 0 {
		// Nothing measured: slow start ends where it is.
		w.ssthresh = w.cwnd
		return
	}
	if w.lr.target < int64(w.cwnd) {
		// A reduction: its recovery period covers the packets sent
		// before the exit.
		w.recoveryStart, w.recoveryValid, w.inRecovery = now, true, true
		w.reductions++
	}
	w.setWindow(w.lr.target)
	w.ssthresh = w.cwnd
	if w.lr.holding {
		w.setWindow(max(w.lr.target, ev.BytesInFlight))
	}
}

// endHold ends the round trip after a long-RTT slow start exit: the
// window becomes the measured one.
func (w *windowBase) endHold() {
	if w.lr.holding {
		w.lr.holding = false
		w.setWindow(w.lr.target)
	}
}

func (w *windowBase) setWindow(n int64) {
	w.cwnd = int(min(max(n, int64(w.minWindow())), int64(w.maxWindow)))
}

// reduce starts a recovery period if the signal concerns a packet sent
// after the current one began (appendix B.6, OnCongestionEvent). It
// reports whether it did; the caller then sets the new window.
func (w *windowBase) reduce(now time.Duration, ev *CongestionEvent) bool {
	w.hs.onCongestion()
	if w.inCongestionRecovery(ev.LargestSentTime) {
		return false
	}
	if w.lr.accelerated() {
		// A loss before the delay exit: reduce from what the path
		// delivered, not from the overshoot (longRTT).
		w.setWindow(int64(w.lr.lossWindow(w.cwnd)))
	}
	w.lr.active = false
	w.lr.flight.stop()
	w.endHold()
	w.recoveryStart = now
	w.recoveryValid = true
	w.inRecovery = true
	w.reductions++
	return true
}

// collapse is the response to persistent congestion (appendix B.8).
func (w *windowBase) collapse() {
	w.lr.active, w.lr.holding = false, false
	w.lr.flight.stop()
	w.cwnd = w.minWindow()
	w.recoveryValid = false
	w.inRecovery = false
}

func (w *windowBase) phase() Phase {
	switch {
	case w.inRecovery:
		return PhaseRecovery
	case w.appLimited:
		return PhaseApplicationLimited
	case w.InSlowStart() && w.hs.inCSS:
		return PhaseConservativeSlowStart
	case w.InSlowStart():
		return PhaseSlowStart
	}
	return PhaseCongestionAvoidance
}

func (w *windowBase) baseState() ControllerState {
	return ControllerState{
		Algorithm:     w.algorithm,
		Phase:         w.phase(),
		Window:        w.cwnd,
		SSThresh:      w.ssthresh,
		RecoveryStart: w.recoveryStart,
		Reductions:    w.reductions,
	}
}
