// Package linkflags adds the link-model flags shared by "satquic emulate"
// and "satquic probe" to a flag.FlagSet, and applies them, in command-line
// order, on top of a netsim.Profile.
//
// Flags ending in -down set the downlink (server to client), -up the
// uplink; the flag without a suffix sets both.
package linkflags

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/loss"
)

// Overrides collects the link flags given on a command line.
type Overrides struct {
	edits []func(p *netsim.Profile)
}

// which names the directions a flag applies to.
type which int

const (
	both which = iota
	down
	up
)

var suffixes = []struct {
	suffix string
	w      which
	scope  string
}{{"", both, "both directions"}, {"-down", down, "the downlink (server to client)"}, {"-up", up, "the uplink (client to server)"}}

// Register adds the link flags to fs and returns where their values go.
func Register(fs *flag.FlagSet) *Overrides {
	o := &Overrides{}
	for _, s := range suffixes {
		perDirection(o, fs, "rate"+s.suffix, "rate of "+s.scope+" in bit/s, with k, M or G (\"50M\"); 0 = unlimited", s.w, parseRate,
			func(c *netsim.LinkConfig, v float64) { c.RateBps, c.RateSchedule, c.Trace = v, nil, nil })
		perDirection(o, fs, "delay"+s.suffix, "one-way delay of "+s.scope+" (\"25ms\"); replaces the profile's delay steps", s.w, parseDuration,
			func(c *netsim.LinkConfig, v time.Duration) { c.Delay, c.DelaySteps = v, nil })
		perDirection(o, fs, "jitter"+s.suffix, "+- jitter on the delay of "+s.scope, s.w, parseDuration,
			func(c *netsim.LinkConfig, v time.Duration) { c.Jitter = v })
		perDirection(o, fs, "loss"+s.suffix, "loss model of "+s.scope+": none, uniform:P, ge:P,R[,LB,LG], burst:P,MAX, ... or just P (\"1%\")", s.w, parseLoss,
			func(c *netsim.LinkConfig, v string) { c.Loss = v })
		perDirection(o, fs, "queue"+s.suffix, "drop-tail queue of "+s.scope+" in bytes, with K or M (x1024); 0 = one BDP", s.w, parseBytes,
			func(c *netsim.LinkConfig, v int) { c.QueueBytes = v })
		perDirection(o, fs, "trace"+s.suffix, "Mahimahi delivery trace FILE for "+s.scope+" (replaces the rate)", s.w, parseTrace,
			func(c *netsim.LinkConfig, v *netsim.DeliveryTrace) { c.Trace = v })
	}
	perDirection(o, fs, "queue-packets", "drop-tail queue limit in packets, both directions; 0 = none", both, parseCount,
		func(c *netsim.LinkConfig, v int) { c.QueuePackets = v })
	perDirection(o, fs, "mtu", "largest packet in bytes (IP packets; relay datagrams count 28 or 48 header bytes); 0 = no limit", both, parseCount,
		func(c *netsim.LinkConfig, v int) { c.MTU = v })
	perDirection(o, fs, "duplicate", "probability that a packet is duplicated (\"0.5%\")", both, parseProbability,
		func(c *netsim.LinkConfig, v float64) { c.Duplicate = v })
	perDirection(o, fs, "corrupt", "probability that one byte of a packet is replaced", both, parseProbability,
		func(c *netsim.LinkConfig, v float64) { c.Corrupt = v })
	perDirection(o, fs, "corrupt-region", "corrupt only within the first N bytes (of the UDP payload in relay mode); 0 = anywhere", both, parseCount,
		func(c *netsim.LinkConfig, v int) { c.CorruptRegion = v })
	perDirection(o, fs, "ecn-threshold", "mark CE when more than N bytes are queued (Not-ECT packets are dropped instead); 0 = never", both, parseCount,
		func(c *netsim.LinkConfig, v int) { c.ECNThreshold = v })
	perDirection(o, fs, "reorder", "let jittered packets overtake each other (true or false)", both, strconv.ParseBool,
		func(c *netsim.LinkConfig, v bool) { c.Reorder = v })
	perDirection(o, fs, "outages", "keep the profile's outages (false removes them)", both, strconv.ParseBool,
		func(c *netsim.LinkConfig, v bool) {
			if !v {
				c.Outages = nil
			}
		})
	return o
}

// perDirection registers one flag whose parsed value edits the link
// configurations it applies to. Parsing happens at once, so a malformed
// value is a flag error; applying waits for the profile.
func perDirection[T any](o *Overrides, fs *flag.FlagSet, name, usage string, w which, parse func(string) (T, error), set func(*netsim.LinkConfig, T)) {
	fs.Func(name, usage, func(s string) error {
		v, err := parse(s)
		if err != nil {
			return err
		}
		o.edits = append(o.edits, func(p *netsim.Profile) {
			if w != up {
				set(&p.Down, v)
			}
			if w != down {
				set(&p.Up, v)
			}
		})
		return nil
	})
}

// Apply returns p with the flags applied in command-line order, and checks
// that both directions are valid.
func (o *Overrides) Apply(p netsim.Profile) (netsim.Profile, error) {
	for _, edit := range o.edits {
		edit(&p)
	}
	if err := p.Down.Validate(); err != nil {
		return p, fmt.Errorf("downlink: %w", err)
	}
	if err := p.Up.Validate(); err != nil {
		return p, fmt.Errorf("uplink: %w", err)
	}
	return p, nil
}

// Set reports whether any link flag was given.
func (o *Overrides) Set() bool { return len(o.edits) > 0 }

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration like 25ms", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%v is negative", d)
	}
	return d, nil
}

func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("%d is negative", n)
	}
	return n, nil
}

func parseProbability(s string) (float64, error) {
	t := strings.TrimSpace(s)
	scale := 1.0
	if rest, ok := strings.CutSuffix(t, "%"); ok {
		t, scale = rest, 100
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a probability", s)
	}
	v /= scale
	if !(v >= 0 && v <= 1) {
		return 0, fmt.Errorf("probability %v is not in [0,1]", v)
	}
	return v, nil
}

// parseLoss accepts a loss spec, or a bare probability as shorthand for a
// uniform loss.
func parseLoss(s string) (string, error) {
	spec := strings.TrimSpace(s)
	if !strings.Contains(spec, ":") && spec != "none" && spec != "" {
		if _, err := parseProbability(spec); err != nil {
			return "", err
		}
		spec = "uniform:" + spec
	}
	if _, err := loss.Parse(spec, 0); err != nil {
		return "", err
	}
	return spec, nil
}

func parseTrace(path string) (*netsim.DeliveryTrace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return netsim.ParseMahimahi(f)
}
