package netsim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/satquic/satquic/netsim/loss"
)

// RateStep changes a link's serialization rate from At on (a rain fade, a
// beam handover). RateBps 0 means infinite, as in LinkConfig.
type RateStep struct {
	At      time.Duration
	RateBps float64
}

// Outage takes the link down for Duration from Start, and again every Repeat
// after that when Repeat > 0. A packet offered while the link is down is
// lost; packets already queued or propagating are not affected (the effect
// of switching netem to 100% loss).
type Outage struct {
	Start, Duration, Repeat time.Duration
}

// DelayStep sets the propagation delay to Delay from At on, and again every
// Every after that when Every > 0. With several steps, the one that fired
// most recently wins, so a pair of repeating steps models Starlink's 15 s
// reconfiguration: {At: 15s, Delay: 40ms, Every: 15s} and
// {At: 18s, Delay: 25ms, Every: 15s}.
type DelayStep struct {
	At, Delay, Every time.Duration
}

// LinkConfig describes one direction of a link. The zero value is a perfect
// link: infinite rate, no delay, no loss.
type LinkConfig struct {
	RateBps      float64        // serialization rate in bit/s; 0 = infinite
	RateSchedule []RateStep     // rate changes, sorted by At
	Trace        *DeliveryTrace // Mahimahi delivery trace; overrides RateBps and RateSchedule
	Delay        time.Duration  // one-way propagation delay
	Jitter       time.Duration  // uniform +- jitter added to the delay
	Reorder      bool           // jittered packets may overtake each other (else order is kept)
	QueueBytes   int            // drop-tail limit in bytes; 0 = one BDP (rate x 2*delay, at least 64 kB)
	QueuePackets int            // drop-tail limit in packets; 0 = no packet limit
	Loss         string         // a netsim/loss spec; "" = none
	Outages      []Outage       // periods when the link is down
	DelaySteps   []DelayStep    // propagation delay changes
	Duplicate    float64        // probability that a packet is duplicated
	Corrupt      float64        // probability that one byte of a packet is replaced
	// CorruptRegion limits corruption to the first CorruptRegion bytes; 0 =
	// the whole packet. The interop runner corrupts within the first 50.
	CorruptRegion int
	// ECNThreshold marks packets CE (Delivery.CE) when more than this many
	// bytes wait ahead of them in the queue; 0 = never.
	ECNThreshold int
	// BleachECN clears the ECN field of every packet, as a middlebox that
	// rewrites the TOS byte does: an endpoint of a Network then sees its
	// datagrams arrive Not-ECT, unmarked. (A Link on its own carries no
	// codepoints; the Network applies it.)
	BleachECN bool
	MTU       int // packets larger than MTU bytes are dropped; 0 = no limit
	Seed      uint64
}

// minDefaultQueueBytes is the floor of the one-BDP default queue, so that
// short, slow links still hold a burst of initial-window packets.
const minDefaultQueueBytes = 64 << 10

// Validate reports the first problem with the configuration.
func (c LinkConfig) Validate() error {
	checks := []func() error{c.validateRate, c.validateTimes, c.validateProbabilities, c.validateSizes}
	for _, check := range checks {
		if err := check(); err != nil {
			return fmt.Errorf("link config: %w", err)
		}
	}
	if _, err := loss.Parse(c.Loss, 0); err != nil {
		return fmt.Errorf("link config: %w", err)
	}
	return nil
}

func validRate(r float64) bool { return r >= 0 && !math.IsInf(r, 0) }

func (c LinkConfig) validateRate() error {
	if !validRate(c.RateBps) {
		return fmt.Errorf("rate %v bit/s must be finite and not negative", c.RateBps)
	}
	for i, s := range c.RateSchedule {
		if !validRate(s.RateBps) {
			return fmt.Errorf("rate step %d: rate %v bit/s must be finite and not negative", i, s.RateBps)
		}
		if s.At < 0 {
			return fmt.Errorf("rate step %d: time %v is negative", i, s.At)
		}
		if i > 0 && s.At < c.RateSchedule[i-1].At {
			return fmt.Errorf("rate step %d at %v comes before step %d at %v", i, s.At, i-1, c.RateSchedule[i-1].At)
		}
	}
	return nil
}

func (c LinkConfig) validateTimes() error {
	if c.Delay < 0 || c.Jitter < 0 {
		return fmt.Errorf("delay %v and jitter %v must not be negative", c.Delay, c.Jitter)
	}
	for i, o := range c.Outages {
		if o.Start < 0 || o.Duration <= 0 || o.Repeat < 0 {
			return fmt.Errorf("outage %d: start %v and repeat %v must not be negative, duration %v must be positive", i, o.Start, o.Repeat, o.Duration)
		}
	}
	for i, s := range c.DelaySteps {
		if s.At < 0 || s.Delay < 0 || s.Every < 0 {
			return fmt.Errorf("delay step %d: at %v, delay %v and every %v must not be negative", i, s.At, s.Delay, s.Every)
		}
	}
	return nil
}

func (c LinkConfig) validateProbabilities() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"duplicate", c.Duplicate}, {"corrupt", c.Corrupt}} {
		if !(f.v >= 0 && f.v <= 1) {
			return fmt.Errorf("%s probability %v not in [0,1]", f.name, f.v)
		}
	}
	return nil
}

func (c LinkConfig) validateSizes() error {
	sizes := []struct {
		name string
		v    int
	}{{"queue bytes", c.QueueBytes}, {"queue packets", c.QueuePackets}, {"corrupt region", c.CorruptRegion},
		{"ECN threshold", c.ECNThreshold}, {"MTU", c.MTU}}
	for _, s := range sizes {
		if s.v < 0 {
			return fmt.Errorf("%s %d is negative", s.name, s.v)
		}
	}
	return nil
}

// PeakRateBps is the highest finite rate the link serializes at: the
// trace's mean rate, or the largest of RateBps and the schedule's rates. It
// is 0 when the link is always infinitely fast.
func (c LinkConfig) PeakRateBps() float64 {
	if c.Trace != nil {
		return c.Trace.MeanRateBps()
	}
	peak := c.RateBps
	for _, s := range c.RateSchedule {
		peak = max(peak, s.RateBps)
	}
	return peak
}

// EffectiveQueueBytes is the drop-tail byte limit the link applies:
// QueueBytes, or by default one bandwidth-delay product at the peak rate and
// the base delay (rate x 2*delay), at least 64 kB. A link that is always
// infinitely fast never queues and reports 0.
func (c LinkConfig) EffectiveQueueBytes() int {
	if c.QueueBytes > 0 {
		return c.QueueBytes
	}
	rate := c.PeakRateBps()
	if rate == 0 {
		return 0
	}
	bdp := rate * (2 * c.Delay).Seconds() / 8
	return max(int(bdp), minDefaultQueueBytes)
}

// clone returns a copy that shares nothing mutable with c, so that a Link
// is not affected by later changes to the caller's slices.
func (c LinkConfig) clone() LinkConfig {
	c.RateSchedule = slices.Clone(c.RateSchedule)
	c.Outages = slices.Clone(c.Outages)
	c.DelaySteps = slices.Clone(c.DelaySteps)
	return c
}
