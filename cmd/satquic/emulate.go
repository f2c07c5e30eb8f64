//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/satquic/satquic/emulate"
	"github.com/satquic/satquic/emulate/linkflags"
	"github.com/satquic/satquic/netsim"
)

func init() {
	register(command{
		name:    "emulate",
		summary: "emulate a network profile in real time: a UDP relay, or two network namespaces",
		run:     runEmulate,
	})
}

const emulateSynopsis = `emulate --profile P --listen HOST:PORT --upstream HOST:PORT [flags]
       satquic emulate --profile P --netns [--name PREFIX] [flags]
       satquic emulate --list-profiles

Relay mode forwards each client's UDP datagrams to the upstream server
through the profile's uplink and the replies through its downlink.
Namespace mode (root) creates PREFIX-client and PREFIX-server, joined by
the emulated link, for any IP traffic. Link flags override the profile.
Human messages go to stderr, statistics (JSON) to stdout.`

// emulateOptions are the command's flags other than the link overrides.
type emulateOptions struct {
	profile, listen, upstream, name, pcap, statsJSON string
	netns, listProfiles, stats                       bool
	seed                                             uint64
	seedSet                                          bool
	statsInterval, duration, idleTimeout             time.Duration
	links                                            *linkflags.Overrides
}

func parseEmulateFlags(args []string, stderr io.Writer) (*emulateOptions, error) {
	o := &emulateOptions{}
	fs := newFlagSet("emulate", emulateSynopsis, stderr)
	fs.StringVar(&o.profile, "profile", "", "network profile (see --list-profiles), or \"none\" for a perfect link")
	fs.StringVar(&o.listen, "listen", "", "relay mode: local HOST:PORT clients send to")
	fs.StringVar(&o.upstream, "upstream", "", "relay mode: the server's HOST:PORT")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", emulate.DefaultIdleTimeout, "relay mode: close a client's flow after this long without traffic")
	fs.BoolVar(&o.netns, "netns", false, "namespace mode (root): any IP traffic between two namespaces")
	fs.StringVar(&o.name, "name", emulate.DefaultPrefix, "namespace mode: the namespaces are NAME-client and NAME-server")
	fs.Func("seed", "seed of the loss and jitter draws (default: random, printed)", func(s string) error {
		_, err := fmt.Sscan(s, &o.seed)
		o.seedSet = true
		return err
	})
	fs.StringVar(&o.pcap, "pcap", "", "write what each direction delivers to FILE-up.pcap and FILE-down.pcap")
	fs.BoolVar(&o.stats, "stats", false, "print statistics as JSON at exit (and every --stats-interval)")
	fs.DurationVar(&o.statsInterval, "stats-interval", 0, "also print statistics this often (implies --stats)")
	fs.StringVar(&o.statsJSON, "stats-json", "", "write the final statistics to FILE as JSON")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (default: run until SIGINT or SIGTERM)")
	fs.BoolVar(&o.listProfiles, "list-profiles", false, "print the profile table and exit")
	o.links = linkflags.Register(fs)
	quietUsage(fs, args, stderr)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	return o, o.check()
}

// quietUsage keeps a bad flag to the one line the dispatcher prints: the
// flag package's own message and the long flag list appear only when help
// was asked for.
func quietUsage(fs *flag.FlagSet, args []string, stderr io.Writer) {
	full := fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		if helpRequested(args) {
			fs.SetOutput(stderr)
			full()
			fs.SetOutput(io.Discard)
		}
	}
}

// check rejects contradictory or missing flags.
func (o *emulateOptions) check() error {
	usage := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
	}
	switch {
	case o.listProfiles:
		return nil
	case o.profile == "":
		return usage("--profile is required (see --list-profiles)")
	case o.netns && (o.listen != "" || o.upstream != ""):
		return usage("--netns and relay mode (--listen, --upstream) exclude each other")
	case !o.netns && (o.listen == "" || o.upstream == ""):
		return usage("relay mode needs --listen and --upstream (or use --netns)")
	case o.statsInterval < 0 || o.duration < 0 || o.idleTimeout <= 0:
		return usage("--stats-interval and --duration must not be negative, --idle-timeout must be positive")
	}
	if o.statsInterval > 0 {
		o.stats = true
	}
	return nil
}

// resolveProfile looks the profile up, seeds it and applies the link
// flags.
func (o *emulateOptions) resolveProfile() (netsim.Profile, error) {
	var p netsim.Profile
	if o.profile == "none" {
		p = netsim.Profile{Name: "none", Description: "a perfect link"}
	} else {
		var err error
		if p, err = netsim.LookupProfile(o.profile); err != nil {
			return p, fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	if !o.seedSet {
		o.seed = rand.Uint64() >> 11 // short enough to retype
	}
	p, err := o.links.Apply(p.WithSeed(o.seed))
	if err != nil {
		return p, fmt.Errorf("%w: %v", errUsage, err)
	}
	return p, nil
}

// emulator is what both modes offer the command.
type emulator interface {
	Stats() emulate.Stats
	Close() error
}

func runEmulate(args []string, stdout, stderr io.Writer) error {
	o, err := parseEmulateFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.listProfiles {
		return linkflags.WriteProfiles(stdout, netsim.Profiles())
	}
	p, err := o.resolveProfile()
	if err != nil {
		return err
	}
	tuneRuntimeForEmulator()
	// Signals are caught before the emulator starts, so that one arriving
	// while namespaces are being made stops the run cleanly once they are.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	em, err := startEmulator(o, p, stderr)
	if err != nil {
		// Everything that fails before the emulator runs is about the
		// command line or the machine: exit status 2, as for bad flags.
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	runtime.GC() // the set-up's garbage, before packets flow
	if !em.Stats().HighPriority {
		fmt.Fprintln(stderr, "note: the packet threads could not get high priority (needs root); on a busy machine packets may leave late (see \"late\" in the statistics)")
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	report := func(s emulate.Stats) emulateReport { return emulateReport{Profile: p.Name, Seed: o.seed, Stats: s} }
	o.printPeriodically(ctx, em, stdout, report)
	final := report(em.Stats())
	closeErr := em.Close()
	return errors.Join(closeErr, o.finish(final, stdout, stderr))
}

// tuneRuntimeForEmulator gives high-priority packet threads spare Ps:
// a thread woken by its timer needs a P to run Go code, and with as many
// Ps as cores they may all be held by ordinary threads the kernel has
// descheduled. Fewer collections mean fewer stop-the-world pauses, which
// on a busy machine last until the collector's ordinary threads get a
// CPU; the packet paths allocate nothing, so after the start-up garbage
// is collected they come rarely.
func tuneRuntimeForEmulator() {
	runtime.GOMAXPROCS(max(16, runtime.NumCPU()))
	debug.SetGCPercent(400)
}

func startEmulator(o *emulateOptions, p netsim.Profile, stderr io.Writer) (emulator, error) {
	if o.netns {
		n, err := emulate.StartNamespaces(emulate.NamespaceConfig{Prefix: o.name, Up: p.Up, Down: p.Down, Pcap: o.pcap})
		if err != nil {
			return nil, err
		}
		announceNamespaces(stderr, n, p, o.seed)
		return n, nil
	}
	r, err := emulate.StartRelay(emulate.RelayConfig{
		Listen: o.listen, Upstream: o.upstream, Up: p.Up, Down: p.Down,
		IdleTimeout: o.idleTimeout, Pcap: o.pcap,
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "satquic emulate: profile %s, seed %d; relaying %v -> %s (uplink %s, downlink %s)\n",
		p.Name, o.seed, r.Addr(), o.upstream, linkflags.Summary(p.Up), linkflags.Summary(p.Down))
	return r, nil
}

func announceNamespaces(w io.Writer, n *emulate.Namespaces, p netsim.Profile, seed uint64) {
	if n.LeftoverRemoved {
		fmt.Fprintln(w, "removed the namespaces a previous run left behind")
	}
	c, s := n.Client(), n.Server()
	fmt.Fprintf(w, "satquic emulate: profile %s, seed %d; uplink %s, downlink %s\n", p.Name, seed, linkflags.Summary(p.Up), linkflags.Summary(p.Down))
	fmt.Fprintf(w, "  server side: ip netns exec %s <command>   (address %v, %v)\n", s.Namespace, s.Addr, s.Addr6)
	fmt.Fprintf(w, "  client side: ip netns exec %s <command>   (address %v, %v; server at %v)\n", c.Namespace, c.Addr, c.Addr6, s.Addr)
	fmt.Fprintln(w, "stop with Ctrl-C or SIGTERM; the namespaces are removed on exit")
}

// emulateReport is one statistics record: the run's profile and seed, then
// the emulator's counters.
type emulateReport struct {
	Profile string `json:"profile"`
	Seed    uint64 `json:"seed"`
	emulate.Stats
}

// printPeriodically prints a JSON line every --stats-interval until ctx
// ends.
func (o *emulateOptions) printPeriodically(ctx context.Context, em emulator, stdout io.Writer, report func(emulate.Stats) emulateReport) {
	if o.statsInterval == 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(o.statsInterval)
	defer t.Stop()
	enc := json.NewEncoder(stdout)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = enc.Encode(report(em.Stats()))
		}
	}
}

// finish prints and saves the final statistics, and says so when the
// emulator could not keep up. On stdout every record is one line of JSON,
// the final one included; the file gets it indented.
func (o *emulateOptions) finish(r emulateReport, stdout, stderr io.Writer) error {
	if o.stats {
		if err := json.NewEncoder(stdout).Encode(r); err != nil {
			return err
		}
	}
	if o.statsJSON != "" {
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.statsJSON, append(data, '\n'), 0o644); err != nil {
			return fmt.Errorf("statistics: %w", err)
		}
	}
	if late := r.Up.Late + r.Down.Late; late > 0 {
		fmt.Fprintf(stderr, "warning: %d packets left more than %v after their due time (uplink %d, downlink %d): the emulator fell behind the model\n",
			late, emulate.LateThreshold, r.Up.Late, r.Down.Late)
	}
	return nil
}
