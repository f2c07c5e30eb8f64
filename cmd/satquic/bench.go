//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/netsim"
)

func init() {
	register(command{
		name:    "bench",
		summary: "run an experiment: download (seed 000, over the emulator), load (seed 001, satquic vs quic-go), requests (seed 002), resume (seed 003), bulk (loopback goodput and idle memory), tunnel (seed 002: requests and goodput through the CONNECT-IP tunnel)",
		run:     runBench,
	})
}

const benchSynopsis = `bench <experiment> [flags]

Experiments:
  download   download completion time per stack over an emulated profile
             (seed 000), in real time through two network namespaces (root)
  load       HTTP/3 requests/s and new connections/s of satquic's server and
             quic-go's, side by side on loopback (seed 001)
  requests   completion times of small requests on a kept-alive connection
             over a lossy path, with and without FEC, in virtual time (seed 002)
  resume     download completion time of a returning client: a new
             connection against one that resumes the session in 0-RTT,
             for satquic and quic-go (seed 003)
  bulk       goodput of one connection on loopback for satquic, quic-go and
             kernel TCP with TLS, and server memory per idle connection
  tunnel     HTTP requests of kernel-TCP programs through the emulated link,
             directly or through the CONNECT-IP tunnel with and without FEC
             (seed 002, in real time, root), and TCP goodput through the
             tunnel (--mode goodput)

Run "satquic bench <experiment> --help" for its flags.`

func runBench(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: satquic %s\n", benchSynopsis)
		return fmt.Errorf("%w: name an experiment (download, load, requests, resume, bulk, tunnel)", errUsage)
	}
	switch args[0] {
	case "download":
		return runBenchDownload(args[1:], stdout, stderr)
	case "resume":
		return runDownloadExperiment(benchResume, args[1:], stdout, stderr)
	case "load":
		return runBenchLoad(args[1:], stdout, stderr)
	case "requests":
		return runBenchRequests(args[1:], stdout, stderr)
	case "bulk":
		return runBenchBulk(args[1:], stdout, stderr)
	case "bulk-peer":
		// The children bench bulk starts for satquic and tcp-tls.
		return runBenchBulkPeer(args[1:], stdout, stderr)
	case "tunnel":
		return runBenchTunnel(args[1:], stdout, stderr)
	case "tunnel-client":
		// The tunnel's client end that bench tunnel starts in the
		// client's namespace.
		return runBenchTunnelClient(args[1:], stdout, stderr)
	case "load-server":
		// The satquic server that bench load starts as a child process.
		return runBenchLoadServer(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(stderr, "Usage: satquic %s\n", benchSynopsis)
		return nil
	default:
		return fmt.Errorf("%w: unknown experiment %q (known: download, load, requests, resume, bulk, tunnel)", errUsage, args[0])
	}
}

const benchDownloadSynopsis = `bench download [--profile P] [--sizes 1MB,10MB,20MB] [--runs N] [--seed S]
       [--stacks S1,S2,...] [--cc C] [--json FILE] [--csv FILE] [--plot FILE.png|DIR]

Measures download completion time, from the start of a fresh connection
(handshakes included) to the last byte, for each stack and size, through
the emulated profile in real time (root: each download gets fresh network
namespaces). Runs interleave the stacks, and run r seeds the links from
--seed and r. Progress goes to stderr, the table to stdout.
Sizes take B, kB, MB, GB (powers of 10) or KiB, MiB, GiB.
Stacks: satquic (satquic's QUIC, hq-interop, FEC under the auto policy;
satquic-hide and satquic-signal under those, satquic-nofec without FEC,
satquic-bbr and satquic-cubic with that controller), quic-go (quic-go's HTTP/3 with
its defaults, built from internal/cmd/quicgo-peer with the go command, so
run from the source tree), tcp-cubic and tcp-bbr (HTTPS over kernel TCP).
--cc cubic|newreno|bbr sets the satquic stacks' congestion controller
(default: the library's); the JSON metadata records it per stack. The
table, CSV and JSON carry each download's goodput in Mbit/s too.
--plot FILE.png draws every size in one figure; --plot DIR (any name not
ending in .png) writes download.png and a figure per size,
download-SIZE.png, into DIR.`

// benchDownloadOptions are the parsed and checked flags.
type benchDownloadOptions struct {
	profile                netsim.Profile
	sizes                  []int64
	runs                   int
	seed                   uint64
	seedSet                bool
	stacks                 []bench.Stack
	jsonPath, csvPath, png string
	timeout                time.Duration
	virtual                bool
}

// The default stacks: satquic with and without FEC beside kernel TCP in
// real time (quic-go is left to --stacks: it is built from the source tree
// when the experiment starts), and the satquic stacks, the only ones the
// simulator runs, in virtual time.
const (
	realTimeStacks = "satquic,satquic-nofec,tcp-cubic,tcp-bbr"
	virtualStacks  = "satquic,satquic-hide,satquic-signal,satquic-nofec"
)

// downloadExperiment is what the experiments that time downloads (bench
// download and bench resume) differ in: their defaults. Both run
// bench.RunDownload and write the same table, CSV, JSON and figures.
type downloadExperiment struct {
	name          string // the experiment's name after "bench"
	synopsis      string
	profile       string // default --profile
	sizes         string // default --sizes
	runs          int    // default --runs
	realStacks    string // default --stacks in real time
	virtualStacks string // default --stacks with --virtual
}

var benchDownload = downloadExperiment{
	name: "download", synopsis: benchDownloadSynopsis, profile: "seed-ifc", sizes: "1MB,10MB,20MB", runs: 50,
	realStacks: realTimeStacks, virtualStacks: virtualStacks,
}

func parseBenchDownloadFlags(args []string, stderr io.Writer) (*benchDownloadOptions, error) {
	return parseDownloadExperimentFlags(benchDownload, args, stderr)
}

func parseDownloadExperimentFlags(x downloadExperiment, args []string, stderr io.Writer) (*benchDownloadOptions, error) {
	o := &benchDownloadOptions{}
	var profile, sizes, stacks, cc string
	fs := newFlagSet("bench "+x.name, x.synopsis, stderr)
	fs.StringVar(&profile, "profile", x.profile, "network profile ("+strings.Join(netsim.ProfileNames(), ", ")+")")
	fs.StringVar(&sizes, "sizes", x.sizes, "comma-separated download sizes")
	fs.IntVar(&o.runs, "runs", x.runs, "downloads per stack and size")
	fs.Func("seed", "seed of the link models' draws (default: random, printed)", func(s string) error {
		v, err := strconv.ParseUint(s, 10, 64)
		o.seed, o.seedSet = v, true
		return err
	})
	fs.StringVar(&stacks, "stacks", "", "comma-separated stacks (available: "+strings.Join(bench.Available(), ", ")+"; default "+x.realStacks+", with --virtual "+x.virtualStacks+")")
	fs.StringVar(&o.jsonPath, "json", "", "write the summaries, every run and the metadata to FILE as JSON")
	fs.StringVar(&o.csvPath, "csv", "", "write every run to FILE as CSV")
	fs.StringVar(&o.png, "plot", "", "draw boxplots and CDFs per size to FILE.png, or to DIR as one PNG per size and one of all")
	fs.DurationVar(&o.timeout, "timeout", 0, "bound on one download (default: 30s + 20 x its physical limit; with --virtual, 10m + 100 x it in simulated time); a download still under way then counts as timed out, at the timeout, and the runs go on")
	fs.BoolVar(&o.virtual, "virtual", false, "run in virtual time over the simulator instead of the emulator (satquic stacks only)")
	fs.StringVar(&cc, "cc", "", "congestion controller of the satquic stacks: cubic, newreno or bbr (default: the library's)")
	quietUsage(fs, args, stderr)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	usage := func(err error) error { return fmt.Errorf("%w: %v", errUsage, err) }
	var err error
	if o.profile, err = netsim.LookupProfile(profile); err != nil {
		return nil, usage(err)
	}
	if o.sizes, err = bench.ParseSizes(sizes); err != nil {
		return nil, usage(err)
	}
	if o.runs < 1 {
		return nil, usage(fmt.Errorf("--runs must be at least 1, not %d", o.runs))
	}
	if o.timeout < 0 {
		return nil, usage(errors.New("--timeout must not be negative"))
	}
	if stacks == "" {
		stacks = x.realStacks
		if o.virtual {
			stacks = x.virtualStacks
		}
	}
	seen := map[string]bool{}
	for _, name := range strings.Split(stacks, ",") {
		name = strings.TrimSpace(name)
		s, err := bench.LookupStack(name)
		if err != nil {
			return nil, usage(err)
		}
		if seen[name] {
			return nil, usage(fmt.Errorf("stack %s given twice", name))
		}
		seen[name] = true
		o.stacks = append(o.stacks, s)
	}
	if err := bench.SetCongestionControl(o.stacks, cc); err != nil {
		return nil, usage(err)
	}
	if o.virtual {
		if err := bench.CheckVirtual(o.stacks); err != nil {
			return nil, usage(err)
		}
	}
	for _, p := range []string{o.jsonPath, o.csvPath, o.png} {
		if p == "" {
			continue
		}
		// Clean drops a trailing slash, so that the parent of "out/" is
		// ".", not "out".
		if dir := filepath.Dir(filepath.Clean(p)); !isDir(dir) {
			return nil, usage(fmt.Errorf("output %s: directory %s does not exist", p, dir))
		}
	}
	if o.png != "" {
		st, err := os.Stat(o.png)
		switch {
		case err == nil && plotToFile(o.png) && st.IsDir():
			return nil, usage(fmt.Errorf("--plot %s is a directory; a name ending in .png is a file", o.png))
		case err == nil && !plotToFile(o.png) && !st.IsDir():
			return nil, usage(fmt.Errorf("--plot %s is a file; want a directory, or a name ending in .png", o.png))
		}
	}
	if !o.seedSet {
		o.seed = rand.Uint64() >> 11 // short enough to retype
	}
	return o, nil
}

func runBenchDownload(args []string, stdout, stderr io.Writer) error {
	return runDownloadExperiment(benchDownload, args, stdout, stderr)
}

// runDownloadExperiment runs bench download or bench resume.
func runDownloadExperiment(x downloadExperiment, args []string, stdout, stderr io.Writer) error {
	o, err := parseDownloadExperimentFlags(x, args, stderr)
	if err != nil {
		return err
	}
	// Stacks may hold files from Check to the last run (quic-go's built
	// peer program).
	defer func() {
		if err := bench.CloseStacks(o.stacks); err != nil {
			fmt.Fprintln(stderr, "warning:", err)
		}
	}()
	// Everything that fails before the first run is about the command
	// line or the machine: exit status 2, as for bad flags.
	if !o.virtual && os.Geteuid() != 0 {
		return fmt.Errorf("%w: the %s experiment runs through network namespaces and needs root (or use --virtual)", errUsage, x.name)
	}
	for _, s := range o.stacks {
		if err := s.Check(); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	tuneRuntimeForEmulator()
	// Signals are caught before the first namespaces exist, so that an
	// interrupt always ends in their removal.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	cfg := bench.DownloadConfig{
		Profile: o.profile, Sizes: o.sizes, Runs: o.runs, Seed: o.seed, Stacks: o.stacks,
		Paths:    bench.NamespacePaths(fmt.Sprintf("sqb%d", os.Getpid()%100000)),
		Virtual:  o.virtual,
		Timeout:  o.timeout,
		Progress: stderr,
	}
	meta := bench.NewMetadata(cfg, version(), append([]string{"satquic", "bench", x.name}, args...))
	fmt.Fprintf(stderr, "satquic bench %s: profile %s, seed %d; %d downloads (%d runs x %d sizes x %d stacks)\n",
		x.name, o.profile.Name, o.seed, o.runs*len(o.sizes)*len(o.stacks), o.runs, len(o.sizes), len(o.stacks))
	out, runErr := bench.RunDownload(ctx, cfg)
	if out == nil {
		return runErr
	}
	doc := bench.NewDocument(meta, out)
	if runErr != nil {
		if len(doc.Results) > 0 {
			fmt.Fprintln(stdout, "Partial results (the experiment did not finish; no files written):")
			_ = doc.WriteText(stdout)
		}
		return runErr
	}
	if err := doc.WriteText(stdout); err != nil {
		return err
	}
	warnAboutEmulator(stderr, doc.Metadata.Emulator)
	return writeBenchFiles(o, doc)
}

func warnAboutEmulator(w io.Writer, e bench.EmulatorInfo) {
	if !e.HighPriority {
		fmt.Fprintln(w, "note: the emulator's packet threads did not all run at high priority; timing may suffer on a busy machine")
	}
	if e.LatePackets > 0 {
		fmt.Fprintf(w, "warning: %d packets left the emulator late (see the late column of --csv): the machine, not only the path, shows in those runs\n", e.LatePackets)
	}
}

func writeBenchFiles(o *benchDownloadOptions, doc bench.Document) error {
	var errs []error
	errs = append(errs, writeOutput(o.jsonPath, doc.WriteJSON))
	errs = append(errs, writeOutput(o.csvPath, doc.RunsTable().WriteCSV))
	switch {
	case o.png == "":
	case plotToFile(o.png):
		g, err := doc.Figure()
		if err == nil {
			err = g.SavePNG(o.png)
		}
		errs = append(errs, err)
	default:
		_, err := doc.WritePlots(o.png)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
