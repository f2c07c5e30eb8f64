package fec

import (
	"fmt"
	"math"
)

// AdaptiveConfig configures an AdaptiveController. Zero fields take the
// defaults in brackets.
type AdaptiveConfig struct {
	// Interval is the number of source ESIs per periodic report [200].
	Interval int
	// MinWindow and MaxWindow bound the proactive window [256, 4095];
	// MaxWindow also bounds how far back a reaction reaches, so it must
	// exceed the round trip in packets with room to spare: the default
	// is the largest window RFC 8681 can name.
	MinWindow, MaxWindow int
	// Memory is the number of sources over which the loss statistics
	// fade, by a factor e [4000].
	Memory int
	// Z is the number of standard deviations of the losses in a window
	// that proactive repairs cover on top of the mean [2].
	Z float64
	// Coverage is how many repairs, per lost source of a typical long
	// burst, cover each source: the window is sized so that
	// window*rate >= Coverage*burst [1.5].
	Coverage float64
	// InitialLoss and InitialBurst are the prior loss rate and mean burst
	// length, worth PriorSources sources of observation [0.01, 1, 1000].
	InitialLoss, InitialBurst float64
	PriorSources              int
	// MaxReaction caps the repairs sent in answer to one report [64].
	MaxReaction int
	// FarZ and FarCoverage replace Z and Coverage when reports come back
	// so late that a reaction could not reach the sources it is for (the
	// round trip in sources exceeds half of MaxWindow, as on a fast GEO
	// path): proactive repairs must then recover nearly everything alone
	// [4, 3].
	FarZ, FarCoverage float64
}

func (c AdaptiveConfig) withDefaults() AdaptiveConfig {
	setDefault := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	setDefault(&c.Interval, 200)
	setDefault(&c.MinWindow, 256)
	setDefault(&c.MaxWindow, controllerWindowLimit)
	setDefault(&c.Memory, 4000)
	setDefault(&c.PriorSources, 1000)
	setDefault(&c.MaxReaction, 64)
	if c.Z == 0 {
		c.Z = 2
	}
	if c.Coverage == 0 {
		c.Coverage = 1.5
	}
	if c.FarZ == 0 {
		c.FarZ = 4
	}
	if c.FarCoverage == 0 {
		c.FarCoverage = 3
	}
	if c.InitialLoss == 0 {
		c.InitialLoss = 0.01
	}
	if c.InitialBurst == 0 {
		c.InitialBurst = 1
	}
	return c
}

func (c AdaptiveConfig) validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case c.Interval < 1:
		return fmt.Errorf("adaptive controller: feedback interval %d, want at least 1", c.Interval)
	case c.MinWindow < 1 || c.MaxWindow < c.MinWindow || c.MaxWindow > controllerWindowLimit:
		return fmt.Errorf("adaptive controller: window bounds %d..%d, want 1 <= min <= max <= %d", c.MinWindow, c.MaxWindow, controllerWindowLimit)
	case c.Memory < 1 || c.PriorSources < 1 || c.MaxReaction < 0:
		return fmt.Errorf("adaptive controller: memory %d, prior %d and max reaction %d must be positive", c.Memory, c.PriorSources, c.MaxReaction)
	case !(c.Z >= 0) || !finite(c.Z) || !(c.Coverage > 0) || !finite(c.Coverage):
		return fmt.Errorf("adaptive controller: z %v and coverage %v must be finite, z >= 0, coverage > 0", c.Z, c.Coverage)
	case !(c.FarZ >= 0) || !finite(c.FarZ) || !(c.FarCoverage > 0) || !finite(c.FarCoverage):
		return fmt.Errorf("adaptive controller: far z %v and far coverage %v must be finite, z >= 0, coverage > 0", c.FarZ, c.FarCoverage)
	case !(c.InitialLoss > 0 && c.InitialLoss < 1):
		return fmt.Errorf("adaptive controller: initial loss %v outside (0,1)", c.InitialLoss)
	case !(c.InitialBurst >= 1) || !finite(c.InitialBurst):
		return fmt.Errorf("adaptive controller: initial burst %v, want a finite value >= 1", c.InitialBurst)
	}
	return nil
}

// AdaptiveController is satquic's redundancy controller. HIRT sends a rate
// computed from the mean loss, over a fixed window, and reacts to nothing
// else: on bursty links a burst longer than the repairs covering it is
// lost for good, and to avoid that the rate must be set far above the
// mean loss. This controller splits the job in two:
//
//  1. Proactive repairs, spread evenly by a credit counter, recover the
//     usual losses without waiting for feedback. With mean loss mu per
//     source and mean burst B (both faded over Memory sources), losses in
//     a window of w sources are a compound Poisson count with mean w*mu
//     and variance w*mu*(2B-1) (geometric bursts), so the rate is
//
//     rate = (mu + Z*sqrt(mu*(2B-1)/w)) / (1-mu)
//
//     (repairs are lost too, hence the division). The window is sized so
//     that the repairs covering each source outnumber a long burst:
//     w*rate >= Coverage*B90, B90 the burst length that 90% of bursts do
//     not exceed, within MinWindow..MaxWindow. The two equations are
//     solved together by a few fixed-point steps. On a clean path, where
//     that rate gives less than one repair per MaxWindow sources, the
//     window is MinWindow: the repairs sent are then a sender's tail
//     repairs, over its newest sources.
//
//  2. Reactive repairs: the receiver reports as soon as a loss run ends
//     (and every Interval sources), with how many lost sources it still
//     misses and the oldest of them. The controller answers with
//     ceil(U/(1-mu) - inflight - 0.1) repairs at once, where inflight is
//     the number of repairs sent after the report's last ESI (the
//     receiver had not seen them yet), and widens the window of every
//     repair to reach back to the oldest missing source until a report
//     says nothing is missing (or it falls out of MaxWindow, or, between
//     reports, OnMissing says it arrived or was rebuilt). Every later
//     report corrects the count, so a reaction that was itself lost is
//     repeated one round trip later.
//
// The proactive part keeps the recovery delay short; the reactive part
// makes the recovered ratio independent of how long bursts are, at the
// cost of one round trip, and needs only about one repair per loss.
//
// A reaction can only reach back MaxWindow sources (4095 at most, RFC
// 8681's NSS), and on a fast GEO path the round trip alone is thousands
// of packets. The controller measures the feedback round trip in sources
// (faded) and, when it exceeds half of MaxWindow, plans with FarZ and
// FarCoverage instead of Z and Coverage, so that proactive repairs
// recover nearly everything by themselves.
type AdaptiveController struct {
	cfg   AdaptiveConfig
	decay float64 // per-source fading factor, 1 - 1/Memory

	// Faded sums of the reports: sources, lost sources, loss runs.
	sources, lost, bursts float64

	rate   float64 // proactive repairs per source
	window int     // proactive window
	credit float64 // fractional repairs owed by the rate

	started   bool
	lastESI   uint32
	sent      uint64   // repairs sent so far
	sentAt    []uint64 // sentAt[esi % len]: repairs sent before source esi's own
	covering  bool     // a reaction is under way: the window reaches coverFrom
	coverFrom uint32
	// lag is the faded number of sources sent between the last ESI a
	// report covers and its arrival: the feedback round trip in sources.
	lag float64
}

// NewAdaptiveController checks cfg, fills in defaults and returns the
// controller.
func NewAdaptiveController(cfg AdaptiveConfig) (*AdaptiveController, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	prior := float64(cfg.PriorSources)
	c := &AdaptiveController{
		cfg:     cfg,
		decay:   1 - 1/float64(cfg.Memory),
		sources: prior,
		lost:    prior * cfg.InitialLoss,
		bursts:  prior * cfg.InitialLoss / cfg.InitialBurst,
		window:  cfg.MinWindow,
		sentAt:  make([]uint64, cfg.MaxWindow),
	}
	c.plan()
	return c, nil
}

// Estimate returns the faded mean loss rate and mean burst length.
func (c *AdaptiveController) Estimate() (loss, burst float64) {
	loss = c.lost / c.sources
	burst = 1.0
	if c.bursts > 0 {
		burst = max(1, c.lost/c.bursts)
	}
	return loss, burst
}

// planned is the proactive window, before any widening by a reaction.
func (c *AdaptiveController) planned() int { return c.window }

// Rate returns the proactive repairs per source currently planned.
func (c *AdaptiveController) Rate() float64 { return c.rate }

// plan recomputes the proactive rate and window from the estimates.
func (c *AdaptiveController) plan() {
	mu, burst := c.Estimate()
	// The 90th percentile of a geometric burst length with mean B.
	b90 := 1.0
	if burst > 1 {
		b90 = 1 + math.Log(0.1)/math.Log(1-1/burst)
	}
	z, coverage := c.cfg.Z, c.cfg.Coverage
	if c.farFeedback() {
		z, coverage = c.cfg.FarZ, c.cfg.FarCoverage
	}
	w := float64(c.window)
	for range 4 {
		c.rate = (mu + z*math.Sqrt(mu*(2*burst-1)/w)) / (1 - min(mu, 0.5))
		c.rate = min(c.rate, 1)
		w = math.Ceil(coverage * b90 / math.Max(c.rate, 1e-9))
		w = min(max(w, float64(c.cfg.MinWindow)), float64(c.cfg.MaxWindow))
	}
	c.window = int(w)
	if c.rate*float64(c.cfg.MaxWindow) < 1 {
		// A clean path: proactive repairs come less than once per
		// largest window, and the repairs that go out are those of tails
		// (and reactions, which widen the window themselves). A tail
		// repair is for the newest sources, which no later packet
		// reveals lost; older ones are revealed by the ACKs of later
		// ones and repaired then. The largest window only made each
		// tail repair cost up to four times the symbol work (a bulk
		// flow through a tunnel goes idle every few hundred packets).
		c.window = c.cfg.MinWindow
	}
}

// farFeedback reports whether the feedback round trip is too long, in
// sources, for reactions to reach what they are meant to repair.
func (c *AdaptiveController) farFeedback() bool {
	return 2*c.lag > float64(c.cfg.MaxWindow)
}

// OnSource pays out the proactive rate and keeps the bookkeeping that
// lets a later report tell which repairs the receiver had not yet seen.
func (c *AdaptiveController) OnSource(esi uint32) int {
	c.started = true
	c.lastESI = esi
	c.sentAt[int(esi%uint32(len(c.sentAt)))] = c.sent
	if c.covering && c.reach(c.coverFrom) > c.cfg.MaxWindow {
		c.covering = false // the missing sources fell out of reach
	}
	c.credit += c.rate
	n := int(c.credit)
	c.credit -= float64(n)
	c.sent += uint64(n)
	return n
}

// reach is the window that covers esi and everything sent after it.
func (c *AdaptiveController) reach(esi uint32) int {
	return int(c.lastESI-esi) + 1
}

// OnFeedback updates the estimates and reacts to what is still missing.
func (c *AdaptiveController) OnFeedback(fb Feedback) int {
	fb = fb.clamped()
	if fb.Sources == 0 {
		return 0
	}
	if c.started {
		lag := float64(c.lastESI - fb.LastESI())
		if c.lag == 0 {
			c.lag = lag
		}
		c.lag = 0.875*c.lag + 0.125*lag
	}
	fade := math.Pow(c.decay, float64(fb.Sources))
	c.sources = c.sources*fade + float64(fb.Sources)
	c.lost = c.lost*fade + float64(fb.Lost)
	c.bursts = c.bursts*fade + float64(fb.Bursts)
	c.plan()
	return c.react(fb)
}

// react sends repairs for sources the report says are still missing.
func (c *AdaptiveController) react(fb Feedback) int {
	if fb.Unrecovered <= 0 || !c.started {
		c.covering = false
		return 0
	}
	if c.reach(fb.OldestUnrecovered) > c.cfg.MaxWindow {
		c.covering = false
		return 0
	}
	c.covering = true
	c.coverFrom = fb.OldestUnrecovered
	mu, _ := c.Estimate()
	need := float64(fb.Unrecovered)/(1-min(mu, 0.5)) - float64(c.inflight(fb.LastESI())) - 0.1
	n := min(int(math.Ceil(need)), c.cfg.MaxReaction)
	if n <= 0 {
		return 0
	}
	c.sent += uint64(n)
	return n
}

// inflight counts the repairs sent after source last, which the receiver
// had not seen when it wrote the report. A report older than the history
// counts none: the controller then errs on the side of sending.
func (c *AdaptiveController) inflight(last uint32) uint64 {
	age := c.lastESI - last
	if age >= uint32(len(c.sentAt)) {
		return 0
	}
	return c.sent - c.sentAt[int(last%uint32(len(c.sentAt)))]
}

// Window is the proactive window, widened while a reaction reaches back
// to an older missing source.
func (c *AdaptiveController) Window() int {
	w := c.window
	if c.covering {
		w = max(w, min(c.reach(c.coverFrom), c.cfg.MaxWindow))
	}
	return w
}

// OnMissing tells the controller, between reports, the oldest source
// still missing (ok false: none is). A reaction's repairs then reach back
// to that source and no further, and stop widening the window once
// nothing is missing. It starts no reaction: only reports do. A sender
// that learns of rebuilt sources sooner than its reports come (a QUIC
// sender reading its peer's FEC_RECOVERED frames between two loss runs)
// so keeps its repairs from reaching back over sources already rebuilt:
// at 1% loss a report finds a fresh loss nearly every time, and the
// window stayed widened to about a round trip of sources, several times
// the proactive window, each repair costing as many symbol operations to
// encode and to decode.
func (c *AdaptiveController) OnMissing(oldest uint32, ok bool) {
	switch {
	case !c.covering:
	case !ok:
		c.covering = false
	case int32(oldest-c.coverFrom) > 0:
		c.coverFrom = oldest
	}
}

// FeedbackPolicy asks for periodic reports and a report after every loss
// run, with losses tracked as far back as the largest window.
func (c *AdaptiveController) FeedbackPolicy() FeedbackPolicy {
	return FeedbackPolicy{Interval: c.cfg.Interval, OnLossRun: true, Horizon: c.cfg.MaxWindow}
}
