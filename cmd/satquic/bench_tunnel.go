//go:build linux

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/bench/tunnelbench"
	"github.com/satquic/satquic/netsim"
)

const benchTunnelSynopsis = `bench tunnel [--profile P] [--sizes 10kB,1MB] [--requests N] [--parallel N] [--gap D]
       [--seed S] [--stacks direct,tunnel-nofec,tunnel-fec,tunnel-fixed] [--lossless]
       [--warm-up SIZE] [--inner-cc NAME] [--json FILE] [--plot FILE.png]
bench tunnel --mode goodput [--flows 1,4] [--duration D] [--loss 0,1] [--json FILE]
       [--stacks satquic,tunnel-fec,tunnel-nofec] [--cpuprofile-dir DIR]

--mode requests (default): HTTP requests of unmodified kernel-TCP programs
(Go's net/http client and server, HTTP/1.1, in two network namespaces)
through the emulated profile in real time (seed 002, figures 7 and 8).
Stacks: direct (no tunnel), tunnel-nofec (the CONNECT-IP tunnel without
FEC), tunnel-fec (adaptive FEC, policy auto: the tunnel's default),
tunnel-fixed (the fixed controller, one repair every 10 packets, no
tail protection). Each stack runs in fresh namespaces; --parallel
kept-alive connections send --requests requests per size, one after the
other with --gap between a response and the next request (HIRT's wrk).
--lossless adds every stack over the same profile with loss and outages
off, the reference of the "p99 excess" column. Each new tunnel first
carries one --warm-up response (16MiB; 0 for none), untimed, so that the
requests meet it in its steady state, as between gateways. The inner
TCP's sockets take the kernel's default congestion control, or --inner-cc
(cubic, bbr, reno: what /proc/sys/net/ipv4/tcp_available_congestion_control
lists); its pacing decides how fast a kept-alive connection's responses
leave. Overhead is the link's
bytes (both directions) beyond the response bodies, as a fraction of
them; fec overhead the repair bytes both tunnel ends sent, as a fraction
of the response bodies.

--mode goodput: bulk TCP through the tunnel over a veth pair with no
emulated delay, with --flows parallel flows for --duration each, with and
without FEC, at each --loss percentage, beside a plain satquic download on
loopback (--stacks chooses among satquic, tunnel-fec and tunnel-nofec;
default all); goodput, CPU time of both tunnel ends per byte, and the inner
TCP's retransmitted segments (/proc/net/snmp of the client's namespace).
Loss is dropped by the kernel on the veth, uniformly at random in both
directions and unseeded: an XDP program on each end draws every datagram
before the receiving end's GRO coalesces those that survive, as a NIC
does after a lossy link (the sending end cuts GSO batches apart); where
the kernel refuses the program, nft's numgen, else iptables' statistic
match, both after GRO, so with UDP GSO off on the veth and each datagram
received alone; a loss above 0 is skipped with a message where none works.
--cpuprofile-dir writes a CPU profile of each tunnel end per stack and loss.

Needs root. Progress goes to stderr, the table to stdout.`

func runBenchTunnel(args []string, stdout, stderr io.Writer) error {
	var (
		cfg                               tunnelbench.Config
		gcfg                              tunnelbench.GoodputConfig
		mode, profile, sizes, stacks      string
		flows, losses, jsonPath, plotPath string
		seed, warmUp                      string
	)
	fs := newFlagSet("bench tunnel", benchTunnelSynopsis, stderr)
	fs.StringVar(&mode, "mode", "requests", "requests or goodput")
	fs.StringVar(&profile, "profile", "starlink", "network profile ("+strings.Join(netsim.ProfileNames(), ", ")+")")
	fs.StringVar(&sizes, "sizes", "10kB,1MB", "comma-separated response sizes")
	fs.IntVar(&cfg.Requests, "requests", 1000, "requests per stack and size")
	fs.IntVar(&cfg.Parallel, "parallel", 5, "kept-alive connections under way at once (HIRT: 5)")
	fs.DurationVar(&cfg.Gap, "gap", 20*time.Millisecond, "pause between a response and the connection's next request")
	fs.StringVar(&seed, "seed", "", "seed of the link model's draws (default: random, printed)")
	fs.StringVar(&stacks, "stacks", strings.Join(tunnelbench.AllStacks, ","), "comma-separated stacks")
	fs.BoolVar(&cfg.Lossless, "lossless", false, "also run every stack with the profile's loss and outages off")
	fs.StringVar(&cfg.InnerCC, "inner-cc", "", "requests: congestion control of the inner HTTP client's and server's TCP sockets (default: the kernel's)")
	fs.StringVar(&warmUp, "warm-up", "16MiB", "requests: response each new tunnel carries before requests are timed (0: none)")
	fs.StringVar(&flows, "flows", "1,4", "goodput: comma-separated numbers of parallel TCP flows")
	fs.DurationVar(&gcfg.Duration, "duration", 10*time.Second, "goodput: length of each measurement")
	fs.StringVar(&losses, "loss", "0,1", "goodput: comma-separated uniform loss percentages on the veth")
	fs.StringVar(&gcfg.ProfileDir, "cpuprofile-dir", "", "goodput: write CPU profiles of both tunnel ends to DIR")
	fs.Float64Var(&cfg.FECMaxOverhead, "fec-max-overhead", 0, "cap of the FEC stacks' repair bytes as a share of the source bytes each tunnel end sends, in (0, 1) (default: the tunnel's, 0.1)")
	fs.StringVar(&jsonPath, "json", "", "write the results to FILE as JSON")
	fs.StringVar(&plotPath, "plot", "", "requests: draw the CDFs to FILE.png")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if seed == "" {
		cfg.Seed = rand.Uint64() >> 11
	} else {
		v, err := strconv.ParseUint(seed, 10, 64)
		if err != nil {
			return usageErr("--seed %q: %v", seed, err)
		}
		cfg.Seed = v
	}
	if cfg.FECMaxOverhead < 0 || cfg.FECMaxOverhead >= 1 {
		return usageErr("--fec-max-overhead %v: want a share in (0, 1)", cfg.FECMaxOverhead)
	}
	gcfg.FECMaxOverhead = cfg.FECMaxOverhead
	warm, err := parseWarmUp(warmUp)
	if err != nil {
		return err
	}
	cfg.WarmUp = warm
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: %v", errUsage, tunnelbench.ErrNeedsRoot)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cfg.ClientEnd = []string{exe, "bench", "tunnel-client"}
	gcfg.ClientEnd = cfg.ClientEnd
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	cmdline := append([]string{"satquic", "bench", "tunnel"}, args...)
	switch mode {
	case "requests":
		// The emulator's relay runs in this process; the goodput mode
		// has none, and measures the Go runtime's own defaults.
		tuneRuntimeForEmulator()
		return runTunnelRequests(ctx, cfg, profile, sizes, stacks, jsonPath, plotPath, cmdline, stdout, stderr)
	case "goodput":
		var err error
		if gcfg.Flows, err = parseInts(flows); err != nil {
			return usageErr("--flows: %v", err)
		}
		if gcfg.LossPercents, err = parseFloats(losses); err != nil {
			return usageErr("--loss: %v", err)
		}
		if gcfg.ProfileDir != "" && !isDir(gcfg.ProfileDir) {
			return usageErr("--cpuprofile-dir %s is not a directory", gcfg.ProfileDir)
		}
		if flagWasSet(fs, "stacks") {
			if gcfg.Stacks, err = tunnelbench.ParseGoodputStacks(stacks); err != nil {
				return usageErr("--stacks: %v", err)
			}
		}
		gcfg.Progress, gcfg.Seed = stderr, cfg.Seed
		gcfg.Prefix = fmt.Sprintf("sqg%d", os.Getpid()%100000)
		return runTunnelGoodput(ctx, gcfg, jsonPath, cmdline, stdout)
	default:
		return usageErr("--mode %q: want requests or goodput", mode)
	}
}

func runTunnelRequests(ctx context.Context, cfg tunnelbench.Config, profile, sizes, stacks, jsonPath, plotPath string, cmdline []string, stdout, stderr io.Writer) error {
	var err error
	if cfg.Profile, err = netsim.LookupProfile(profile); err != nil {
		return usageErr("%v", err)
	}
	if cfg.Sizes, err = bench.ParseSizes(sizes); err != nil {
		return usageErr("--sizes: %v", err)
	}
	if cfg.Stacks, err = tunnelbench.ParseStacks(stacks); err != nil {
		return usageErr("--stacks: %v", err)
	}
	switch {
	case cfg.Requests < 1:
		return usageErr("--requests %d, want at least 1", cfg.Requests)
	case cfg.Parallel < 1:
		return usageErr("--parallel %d, want at least 1", cfg.Parallel)
	case cfg.Gap < 0:
		return usageErr("--gap %v is negative", cfg.Gap)
	}
	if cfg.InnerCC != "" {
		if err := bench.EnsureTCPCongestionControl(cfg.InnerCC); err != nil {
			return usageErr("--inner-cc: %v", err)
		}
	}
	cfg.Progress = stderr
	cfg.Prefix = fmt.Sprintf("sqt%d", os.Getpid()%100000)
	innerCC, whence := cfg.InnerCC, "--inner-cc"
	if innerCC == "" {
		innerCC, whence = cmp.Or(tunnelbench.DefaultTCPCongestionControl(), "unknown"), "the kernel's default"
	}
	fmt.Fprintf(stderr, "satquic bench tunnel: profile %s, seed %d, %d requests per stack and size, %d connections, inner TCP %s (%s)\n",
		cfg.Profile.Name, cfg.Seed, cfg.Requests, cfg.Parallel, innerCC, whence)
	results, runErr := tunnelbench.Run(ctx, cfg)
	if err := tunnelbench.Table(results).WriteText(stdout); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	doc := tunnelbench.Document{
		Experiment: "tunnel", Command: cmdline, Version: version(), Profile: cfg.Profile.Name, Seed: cfg.Seed,
		Parallel: cfg.Parallel, GapS: cfg.Gap.Seconds(),
		FixedRate:                 fmt.Sprintf("%d:%d", tunnelbench.FixedSources, tunnelbench.FixedRepairs),
		InnerTCPCongestionControl: innerCC, Machine: bench.Machine(), Results: results,
	}
	errs := []error{writeOutput(jsonPath, doc.WriteJSON)}
	if plotPath != "" {
		f, err := tunnelbench.Figure(results, cfg.Profile.Name)
		if err == nil {
			err = f.SavePNG(plotPath)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func parseInts(list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q: want positive integers", list)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseFloats(list string) ([]float64, error) {
	var out []float64
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || v < 0 || v >= 100 {
			return nil, fmt.Errorf("%q: want percentages from 0 to below 100", list)
		}
		out = append(out, v)
	}
	return out, nil
}

func runTunnelGoodput(ctx context.Context, cfg tunnelbench.GoodputConfig, jsonPath string, cmdline []string, stdout io.Writer) error {
	results, runErr := tunnelbench.RunGoodput(ctx, cfg)
	if err := tunnelbench.GoodputTable(results).WriteText(stdout); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	doc := tunnelbench.GoodputDocument{
		Experiment: "tunnel-goodput", Command: cmdline, Version: version(), Seed: cfg.Seed,
		DurationS: cfg.Duration.Seconds(), Machine: bench.Machine(), Results: results,
	}
	return writeOutput(jsonPath, doc.WriteJSON)
}

// runBenchTunnelClient is the tunnel's client end that bench tunnel starts
// in the client's namespace.
func runBenchTunnelClient(args []string, stdout, _ io.Writer) error {
	return tunnelbench.RunClientEnd(args, os.Stdin, stdout)
}

// parseWarmUp reads --warm-up: a size, or 0 for none.
func parseWarmUp(s string) (int64, error) {
	if strings.TrimSpace(s) == "0" {
		return tunnelbench.NoWarmUp, nil
	}
	n, err := bench.ParseSize(s)
	if err != nil {
		return 0, usageErr("--warm-up: %v (0 for none)", err)
	}
	return n, nil
}
