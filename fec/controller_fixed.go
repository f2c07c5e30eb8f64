package fec

import "fmt"

// FixedConfig configures a FixedController.
type FixedConfig struct {
	// Sources and Repairs give the code rate: Repairs repair symbols for
	// every Sources source symbols (k:r). Sources >= 1, Repairs >= 0.
	Sources, Repairs int
	// Window is how many recent sources each repair covers; 0 means
	// Sources, so that every source is covered by about Repairs repairs.
	Window int
}

// FixedController sends Repairs repairs per Sources sources at a constant
// rate, spread as evenly as whole packets allow: after the i-th source of
// a cycle (i = 1..k) it sends floor(i*r/k) - floor((i-1)*r/k) repairs. It
// ignores feedback.
type FixedController struct {
	k, r, window int
	pos          int // sources of the current cycle already sent, 0..k-1
}

// NewFixedController checks cfg and returns the controller.
func NewFixedController(cfg FixedConfig) (*FixedController, error) {
	if cfg.Sources < 1 {
		return nil, fmt.Errorf("fixed controller: %d sources per cycle, want at least 1", cfg.Sources)
	}
	if cfg.Repairs < 0 {
		return nil, fmt.Errorf("fixed controller: %d repairs per cycle, want at least 0", cfg.Repairs)
	}
	window := cfg.Window
	if window == 0 {
		window = cfg.Sources
	}
	if window < 1 || window > controllerWindowLimit {
		return nil, fmt.Errorf("fixed controller: window %d outside 1..%d", window, controllerWindowLimit)
	}
	return &FixedController{k: cfg.Sources, r: cfg.Repairs, window: window}, nil
}

// OnSource returns the repairs due after this source.
func (c *FixedController) OnSource(uint32) int {
	before := c.pos * c.r / c.k
	c.pos++
	after := c.pos * c.r / c.k
	if c.pos == c.k {
		c.pos = 0
	}
	return after - before
}

// OnFeedback ignores the report: the rate is fixed.
func (c *FixedController) OnFeedback(Feedback) int { return 0 }

// Window is the configured window.
func (c *FixedController) Window() int { return c.window }

// FeedbackPolicy asks for nothing.
func (c *FixedController) FeedbackPolicy() FeedbackPolicy { return FeedbackPolicy{} }
