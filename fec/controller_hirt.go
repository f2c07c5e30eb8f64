package fec

import (
	"fmt"
	"math"
)

// HIRTConfig configures a HIRTController. Zero fields take the values of
// HIRT's simulator (Navarre, Michel and Barbette, "A High-Speed Robust
// Tunnel using Forward Erasure Correction in Segment Routing", section
// VIII).
type HIRTConfig struct {
	// Alpha is the EWMA memory of the loss estimates, in [0, 1); 0 means
	// 0.9.
	Alpha float64
	// Beta scales the rate and the weight of the deviation; 0 means 3.
	Beta float64
	// Window is the number of sources every repair covers; 0 means 200.
	Window int
	// Interval is the number of source ESIs per feedback report; 0 means
	// 500.
	Interval int
	// InitialLoss is the loss rate assumed before the first report; the
	// controller starts from max(InitialLoss, 1/Window).
	InitialLoss float64
}

func (c HIRTConfig) withDefaults() HIRTConfig {
	if c.Alpha == 0 {
		c.Alpha = 0.9
	}
	if c.Beta == 0 {
		c.Beta = 3
	}
	if c.Window == 0 {
		c.Window = 200
	}
	if c.Interval == 0 {
		c.Interval = 500
	}
	return c
}

func (c HIRTConfig) validate() error {
	switch {
	case !(c.Alpha >= 0 && c.Alpha < 1):
		return fmt.Errorf("hirt controller: alpha %v outside [0,1)", c.Alpha)
	case !(c.Beta > 0) || math.IsInf(c.Beta, 0):
		return fmt.Errorf("hirt controller: beta %v must be positive and finite", c.Beta)
	case c.Window < 1 || c.Window > controllerWindowLimit:
		return fmt.Errorf("hirt controller: window %d outside 1..%d", c.Window, controllerWindowLimit)
	case c.Interval < 1:
		return fmt.Errorf("hirt controller: feedback interval %d, want at least 1", c.Interval)
	case !(c.InitialLoss >= 0 && c.InitialLoss <= 1):
		return fmt.Errorf("hirt controller: initial loss %v outside [0,1]", c.InitialLoss)
	}
	return nil
}

// HIRTController is the adaptive rule of HIRT's simulator. Each report's
// loss rate l updates an EWMA of the mean and of the mean absolute
// deviation:
//
//	sigma <- a*sigma + (1-a)*|mu - l|   (mu before this update)
//	mu    <- a*mu    + (1-a)*l
//
// and one repair is sent every step = ceil(1/(b*(mu + b*sigma))) sources,
// over a fixed window of w sources (the paper's interleaved schedule, with
// its ceil; the simulator's b weights both terms). It never reacts to a
// single report with extra repairs.
type HIRTController struct {
	cfg       HIRTConfig
	mu, sigma float64
	step      int // sources between repairs; 0 when no repair is due at all
	sinceLast int // sources since the last repair
}

// NewHIRTController checks cfg, fills in defaults and returns the
// controller.
func NewHIRTController(cfg HIRTConfig) (*HIRTController, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &HIRTController{cfg: cfg, mu: max(cfg.InitialLoss, 1/float64(cfg.Window))}
	c.updateStep()
	return c, nil
}

// Estimate returns the current loss mean and deviation estimates.
func (c *HIRTController) Estimate() (mu, sigma float64) { return c.mu, c.sigma }

// Step returns the current number of sources between repairs (0: none).
func (c *HIRTController) Step() int { return c.step }

// OnSource sends one repair every step sources.
func (c *HIRTController) OnSource(uint32) int {
	if c.step == 0 {
		return 0
	}
	c.sinceLast++
	if c.sinceLast < c.step {
		return 0
	}
	c.sinceLast = 0
	return 1
}

// OnFeedback folds the report's loss rate into the estimates and
// recomputes the step; it never asks for repairs at once.
func (c *HIRTController) OnFeedback(fb Feedback) int {
	fb = fb.clamped()
	if fb.Sources == 0 {
		return 0
	}
	local := fb.LossRate()
	a := c.cfg.Alpha
	c.sigma = a*c.sigma + (1-a)*math.Abs(c.mu-local)
	c.mu = a*c.mu + (1-a)*local
	c.updateStep()
	return 0
}

func (c *HIRTController) updateStep() {
	b := c.cfg.Beta
	rate := b * (c.mu + b*c.sigma)
	if rate <= 0 {
		c.step = 0
		return
	}
	// A rate above one repair per source saturates at one; a vanishing
	// rate is held at one repair per 2^30 sources so the step fits an int.
	c.step = int(math.Ceil(1 / math.Max(min(rate, 1), 1.0/(1<<30))))
}

// Window is the fixed window w.
func (c *HIRTController) Window() int { return c.cfg.Window }

// FeedbackPolicy asks for a report every Interval sources, as HIRT does.
func (c *HIRTController) FeedbackPolicy() FeedbackPolicy {
	return FeedbackPolicy{Interval: c.cfg.Interval}
}
