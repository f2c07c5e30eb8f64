package recovery

import "time"

// newReno is the congestion controller of RFC 9002 section 7 and appendix
// B: slow start (with HyStart++ if configured), additive increase of one
// maximum datagram per window acknowledged, halving on congestion at most
// once per recovery period, collapse on persistent congestion.
type newReno struct {
	windowBase
	// caAcked counts bytes acknowledged in congestion avoidance since the
	// last increase, so that growth is exactly one datagram per window
	// (section 7.3.3) whatever the ACK pattern.
	caAcked int64
}

// lossReductionNum/Den is kLossReductionFactor, 1/2 (appendix B.2).
const (
	lossReductionNum = 1
	lossReductionDen = 2
)

func newNewReno(cfg *Config) *newReno {
	return &newReno{windowBase: newWindowBase(cfg, NewReno)}
}

func (r *newReno) OnPacketSent(now time.Duration, bytes int, priorInFlight int64) {
	r.onSent(now, bytes, priorInFlight)
}

// OnAck is appendix B.5's OnPacketsAcked.
func (r *newReno) OnAck(now time.Duration, ev *AckEvent) {
	n := r.growable(now, ev)
	if r.InSlowStart() {
		r.slowStart(now, ev, n)
		return
	}
	if r.lr.holding {
		// The round trip after a long-RTT exit: congestion avoidance
		// starts when it ends, from the measured window.
		return
	}
	r.caAcked += n
	for r.caAcked >= int64(r.cwnd) && r.cwnd < r.maxWindow {
		r.caAcked -= int64(r.cwnd)
		r.setWindow(int64(r.cwnd + r.mds))
	}
	if r.cwnd >= r.maxWindow {
		r.caAcked = 0
	}
}

// OnCongestionEvent is appendix B.6 and B.8.
func (r *newReno) OnCongestionEvent(now time.Duration, ev *CongestionEvent) {
	if r.handshakeLoss(now, ev, float64(lossReductionNum)/lossReductionDen) {
		return
	}
	if r.reduce(now, ev) {
		r.ssthresh = r.cwnd * lossReductionNum / lossReductionDen
		r.setWindow(int64(r.ssthresh))
		r.caAcked = 0
	}
	if ev.Persistent {
		r.collapse()
		r.caAcked = 0
	}
}

func (r *newReno) State() ControllerState { return r.baseState() }
