//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/satquic/satquic/emulate/linkflags"
	"github.com/satquic/satquic/emulate/probe"
	"github.com/satquic/satquic/netsim"
)

func init() {
	register(command{
		name:    "probe",
		summary: "measure a link through \"satquic emulate\": delivered rate, one-way delay, loss, loss runs",
		run:     runProbe,
	})
}

const probeSynopsis = `probe --via HOST:PORT --sink HOST:PORT [--direction up|down] [--send-rate R] [--size N] [--duration D]
                     [--profile P [link flags]] [--json] [--check]

Sends paced, numbered datagrams through a relay-mode emulator whose
--listen is --via and whose --upstream is --sink, receives them in the same
process, and reports what arrived. With --profile (and the same link flags
as the emulator) each result is checked against the model; --check makes a
failed check exit with status 1.`

type probeOptions struct {
	cfg          probe.Config
	direction    string
	profile      string
	json, check  bool
	links        *linkflags.Overrides
	rateFlagText string
}

func parseProbeFlags(args []string, stderr io.Writer) (*probeOptions, error) {
	o := &probeOptions{}
	fs := newFlagSet("probe", probeSynopsis, stderr)
	fs.StringVar(&o.cfg.Via, "via", "", "the emulator's --listen address")
	fs.StringVar(&o.cfg.Sink, "sink", "", "local address to receive on (up) or send from (down): the emulator's --upstream")
	fs.StringVar(&o.direction, "direction", "up", "up (client to sink) or down (sink to client)")
	fs.StringVar(&o.rateFlagText, "send-rate", "10M", "offered rate in bit/s, IP and UDP headers included, as link rates are")
	fs.IntVar(&o.cfg.Size, "size", 1400, "UDP payload of each datagram in bytes")
	fs.DurationVar(&o.cfg.Duration, "duration", 5*time.Second, "how long to send")
	fs.DurationVar(&o.cfg.Warmup, "warmup", 500*time.Millisecond, "arrivals left out of the delivered rate, while the queue fills")
	fs.DurationVar(&o.cfg.Drain, "drain", time.Second, "wait for stragglers after the last datagram (plus the model's delay)")
	fs.StringVar(&o.profile, "profile", "", "check the results against this profile (\"none\" for a perfect link) with the link flags below")
	fs.BoolVar(&o.json, "json", false, "print the result and the checks as JSON")
	fs.BoolVar(&o.check, "check", false, "exit with status 1 when a check fails")
	o.links = linkflags.Register(fs)
	quietUsage(fs, args, stderr)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	return o, o.finishFlags()
}

func (o *probeOptions) finishFlags() error {
	var err error
	if o.cfg.RateBps, err = linkflags.ParseRate(o.rateFlagText); err != nil {
		return fmt.Errorf("%w: --send-rate: %v", errUsage, err)
	}
	switch {
	case o.cfg.Via == "" || o.cfg.Sink == "":
		return fmt.Errorf("%w: --via and --sink are required", errUsage)
	case o.direction != "up" && o.direction != "down":
		return fmt.Errorf("%w: --direction %q: want up or down", errUsage, o.direction)
	case o.profile == "" && o.links.Set():
		return fmt.Errorf("%w: link flags need --profile (use --profile none for a perfect link)", errUsage)
	}
	o.cfg.Down = o.direction == "down"
	o.cfg.Realtime = true // the probe command is a process of its own
	return nil
}

// model is the link the results are checked against, if any.
func (o *probeOptions) model() (*netsim.LinkConfig, error) {
	if o.profile == "" {
		return nil, nil
	}
	p := netsim.Profile{Name: "none"}
	if o.profile != "none" {
		var err error
		if p, err = netsim.LookupProfile(o.profile); err != nil {
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	p, err := o.links.Apply(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	link := p.Up
	if o.cfg.Down {
		link = p.Down
	}
	return &link, nil
}

// probeReport is the JSON output.
type probeReport struct {
	*probe.Result
	Checks []probe.Check `json:"checks,omitempty"`
}

// errCheckFailed makes --check exit with status 1.
var errCheckFailed = errors.New("a check against the model failed")

func runProbe(args []string, stdout, stderr io.Writer) error {
	o, err := parseProbeFlags(args, stderr)
	if err != nil {
		return err
	}
	link, err := o.model()
	if err != nil {
		return err
	}
	if link != nil {
		// Datagrams still crossing a long link are not lost.
		o.cfg.Drain += 2 * link.Delay
	}
	// The probe's threads need the same spare Ps as the emulator's, and no
	// garbage collection: its stop-the-world phases end only when the
	// collector's ordinary threads get a CPU, which on a busy machine
	// stalls the high-priority sender and receiver for tens of
	// milliseconds. A run allocates its buffers up front and little else.
	tuneRuntimeForEmulator()
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	res, err := probe.Run(o.cfg)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	rep := probeReport{Result: res}
	if link != nil {
		rep.Checks = probe.Compare(res, *link)
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printProbe(stdout, o, rep)
	}
	if o.check && slices.ContainsFunc(rep.Checks, func(c probe.Check) bool { return !c.Pass && !c.Skipped }) {
		return errCheckFailed
	}
	return nil
}

func printProbe(w io.Writer, o *probeOptions, rep probeReport) {
	r := rep.Result
	ms := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/1e6) }
	fmt.Fprintf(w, "probe: %slink, %d-byte datagrams offered at %.3f Mbit/s for %v (high-priority threads: %v)\n",
		r.Direction, r.Size, r.OfferedBps/1e6, o.cfg.Duration, r.HighPriority)
	fmt.Fprintf(w, "sent %d, received %d, lost %d (%.4f%%), duplicates %d; sender at worst %v behind its pacing (%v skipped)\n",
		r.Sent, r.Received, r.Lost, 100*r.LossRate, r.Duplicates, r.SenderBehind.Round(time.Microsecond), r.SenderSkipped.Round(time.Microsecond))
	fmt.Fprintf(w, "delivered rate  %.3f Mbit/s (after %v of warm-up)\n", r.DeliveredBps/1e6, o.cfg.Warmup)
	fmt.Fprintf(w, "one-way delay   min %s  p50 %s  p90 %s  p99 %s  max %s ms\n",
		ms(r.DelayMin), ms(r.DelayP50), ms(r.DelayP90), ms(r.DelayP99), ms(r.DelayMax))
	fmt.Fprintf(w, "loss runs       %s\n", runsText(r.Bursts))
	if len(rep.Checks) > 0 {
		fmt.Fprintf(w, "against the %s model (%slink):\n", o.profile, r.Direction)
	}
	for _, c := range rep.Checks {
		verdict := "PASS"
		switch {
		case c.Skipped:
			fmt.Fprintf(w, "  SKIP %s: %s\n", c.Name, c.Expected)
			continue
		case !c.Pass:
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "  %s %s: %s; model %s\n", verdict, c.Name, c.Measured, c.Expected)
	}
}

// runsText lists loss runs as length:count, shortest first.
func runsText(runs map[int]int) string {
	if len(runs) == 0 {
		return "none"
	}
	var lengths []int
	for l := range runs {
		lengths = append(lengths, l)
	}
	slices.Sort(lengths)
	var b strings.Builder
	for i, l := range lengths {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%d", l, runs[l])
	}
	return b.String()
}
