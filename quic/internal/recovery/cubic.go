package recovery

import (
	"math"
	"time"
)

// CUBIC constants (RFC 9438 section 4.1 and 5): C = 0.4, beta_cubic = 0.7,
// alpha_cubic = 3 * (1 - beta) / (1 + beta).
const (
	cubicC     = 0.4
	cubicBeta  = 0.7
	cubicAlpha = 3 * (1 - cubicBeta) / (1 + cubicBeta)
)

// cubic is RFC 9438. Windows are kept in bytes as float64 so that growth of
// a fraction of a datagram per ACK is not lost; the RFC's formulas are in
// segments, so W_cubic converts with the maximum datagram size.
type cubic struct {
	windowBase
	fastConvergence bool

	cwndF float64
	// wMax is W_max in bytes; zero when undefined (before the first
	// congestion event, after persistent congestion): the next congestion
	// avoidance stage then starts with W_max = cwnd and K = 0 (sections
	// 4.8 and 4.10).
	wMax      float64
	cwndPrior float64
	k         float64 // seconds
	wEst      float64

	epochStart time.Duration
	hasEpoch   bool
	lastSend   time.Duration
	hasSent    bool
}

func newCubic(cfg *Config) *cubic {
	c := &cubic{windowBase: newWindowBase(cfg, CUBIC), fastConvergence: !cfg.CUBIC.NoFastConvergence}
	c.cwndF = float64(c.cwnd)
	return c
}

// OnPacketSent keeps idle time out of t: after a period with nothing in
// flight the epoch moves forward by the idle time (section 5.8).
func (c *cubic) OnPacketSent(now time.Duration, bytes int, priorInFlight int64) {
	c.onSent(now, bytes, priorInFlight)
	if priorInFlight == 0 && c.hasEpoch && c.hasSent {
		if idle := now - c.lastSend; idle > 0 {
			c.epochStart = min(c.epochStart+idle, now)
		}
	}
	c.lastSend, c.hasSent = now, true
}

func (c *cubic) OnAck(now time.Duration, ev *AckEvent) {
	n := c.growable(now, ev)
	c.sync()
	if c.InSlowStart() {
		c.slowStart(now, ev, n)
		c.cwndF = float64(c.cwnd)
		return
	}
	if c.lr.holding {
		// The round trip after a long-RTT exit: the stage starts when
		// it ends, from the measured window.
		return
	}
	if !c.hasEpoch {
		c.startEpoch(now)
	}
	if n == 0 {
		return
	}
	c.avoid(now, float64(n), ev.RTT.SmoothedRTT())
}

// sync follows a window the shared code set (the end of a long-RTT hold,
// a reduction from a long-RTT slow start): cwndF keeps the fraction of a
// byte that congestion avoidance accrued, so it agrees with cwnd otherwise.
func (c *cubic) sync() {
	if int(c.cwndF) != c.cwnd {
		c.cwndF = float64(c.cwnd)
	}
}

// startEpoch begins a congestion avoidance stage (section 4.2): K is the
// time W_cubic needs to climb back from this window to W_max.
func (c *cubic) startEpoch(now time.Duration) {
	c.epochStart, c.hasEpoch = now, true
	c.wEst = c.cwndF
	if c.cwndPrior == 0 {
		// Slow start ended without a congestion event (HyStart++).
		c.cwndPrior = c.cwndF
	}
	if c.wMax <= c.cwndF {
		c.wMax, c.k = c.cwndF, 0
		return
	}
	c.k = math.Cbrt((c.wMax - c.cwndF) / float64(c.mds) / cubicC)
}

// wCubic is W_cubic(t) = C * (t - K)^3 + W_max (section 4.2, figure 1),
// in bytes, for t in seconds since the epoch began.
func (c *cubic) wCubic(t float64) float64 {
	d := t - c.k
	return cubicC*d*d*d*float64(c.mds) + c.wMax
}

// avoid grows the window for acked bytes in congestion avoidance.
func (c *cubic) avoid(now time.Duration, acked float64, srtt time.Duration) {
	t := (now - c.epochStart).Seconds()
	target := min(max(c.wCubic(t+srtt.Seconds()), c.cwndF), 1.5*c.cwndF)
	// Section 4.3: the Reno-friendly estimate, with alpha 1 once it has
	// reached the window before the last reduction.
	alpha := cubicAlpha
	if c.wEst >= c.cwndPrior {
		alpha = 1
	}
	c.wEst += alpha * acked * float64(c.mds) / c.cwndF
	if c.wCubic(t) < c.wEst {
		// Reno-friendly region: follow W_est, but never shrink the
		// window between congestion events.
		c.cwndF = max(c.cwndF, c.wEst)
	} else {
		// Concave and convex regions (sections 4.4, 4.5).
		c.cwndF += (target - c.cwndF) / c.cwndF * acked
	}
	c.cwndF = min(c.cwndF, float64(c.maxWindow))
	c.cwnd = int(c.cwndF)
}

// OnCongestionEvent is sections 4.6 and 4.7, and 4.8 for persistent
// congestion.
func (c *cubic) OnCongestionEvent(now time.Duration, ev *CongestionEvent) {
	if c.handshakeLoss(now, ev, cubicBeta) {
		c.cwndF = float64(c.cwnd)
		return
	}
	if c.reduce(now, ev) {
		c.sync()
		if c.fastConvergence && c.cwndF < c.wMax {
			c.wMax = c.cwndF * (1 + cubicBeta) / 2
		} else {
			c.wMax = c.cwndF
		}
		c.cwndPrior = c.cwndF
		c.ssthresh = max(int(c.cwndF*cubicBeta), c.minWindow())
		c.setWindow(int64(c.ssthresh))
		c.cwndF = float64(c.cwnd)
		c.hasEpoch = false
	}
	if ev.Persistent {
		c.collapse()
		c.cwndF = float64(c.cwnd)
		c.wMax = 0
		c.hasEpoch = false
	}
}

func (c *cubic) SetMaxDatagramSize(n int) {
	c.windowBase.SetMaxDatagramSize(n)
	c.cwndF = float64(c.cwnd)
}

func (c *cubic) State() ControllerState {
	s := c.baseState()
	s.WMax = int(c.wMax)
	s.K = time.Duration(c.k * float64(time.Second))
	return s
}
