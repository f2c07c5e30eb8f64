package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/fec/fecsim"
	"github.com/satquic/satquic/internal/report"
	"github.com/satquic/satquic/netsim/loss"
)

// satquic sim: the FEC simulator (package fec/fecsim) on the command line.
// One run per scheme over one loss model, or the sweeps of HIRT's figures
// 10 and 11 for several schemes; a table, JSON, CSV and a PNG figure.

func init() {
	register(command{
		name:    "sim",
		summary: "simulate FEC schemes over a lossy channel (HIRT's figures 10 and 11)",
		run:     runSim,
	})
}

const simSynopsis = `sim [--scheme S[,S...]] [--loss SPEC] [--packets N] [--seed S] [--json]
       satquic sim --sweep uniform|ge|starlink|all [--scheme S,...] [--plot FILE.png]

Schemes: rlc-adaptive, rlc-hirt, rlc-fixed, xor, rs, maelstrom (or "all").
Loss specs (netsim/loss): uniform:P, ge:P,R[,LB,LG], burst:P,MAX, drop:I,J-K, trace:FILE.
Ratios in --json are fractions; delays are in packets sent.`

// Sweep defaults: fewer packets than a single run, after a warm-up, so
// that "--sweep all" (672 runs) takes well under a minute on two cores.
const (
	sweepPackets = 20_000
	sweepWarmup  = 5_000
)

// simOptions are the parsed flags.
type simOptions struct {
	schemes    string
	loss       string
	packets    int
	warmup     int
	seed       uint64
	rtt        int
	window     int
	fixed      string
	xorK       int
	rs         string
	maelstrom  string
	hirtB      float64
	payload    string
	sweep      string
	gePoints   int
	workers    int
	jsonOut    bool
	csvFile    string
	plotFile   string
	quiet      bool
	minPayload int
	maxPayload int
}

func (o *simOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.schemes, "scheme", "", "schemes, comma-separated, or \"all\" (default rlc-adaptive for one run, all for a sweep)")
	fs.StringVar(&o.loss, "loss", "uniform:0.005", "loss model spec for one run")
	fs.IntVar(&o.packets, "packets", 0, "measured source packets per run (default 100000, or 20000 in a sweep)")
	fs.IntVar(&o.warmup, "warmup", 0, "unmeasured source packets before the measured ones (default 0, or 5000 in a sweep)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the loss model and payloads (sweep point i uses seed+i)")
	fs.IntVar(&o.rtt, "rtt-packets", fecsim.DefaultRTTPackets, "feedback delay in packets sent")
	fs.IntVar(&o.window, "window", 0, "RLC window: HIRT's and rlc-fixed's w (default 200), rlc-adaptive's largest (default 4095)")
	fs.StringVar(&o.fixed, "fixed", "20:1", "rlc-fixed rate K:R (R repairs per K sources)")
	fs.IntVar(&o.xorK, "xor-k", fecsim.DefaultXORK, "xor: one parity per K sources")
	fs.StringVar(&o.rs, "rs", "20:2", "rs: block shape DATA:PARITY")
	fs.StringVar(&o.maelstrom, "maelstrom", fecsim.DefaultMaelstrom, "maelstrom layers and window, e.g. 1-20:20 or 1-20-40:8")
	fs.Float64Var(&o.hirtB, "hirt-b", fecsim.DefaultHIRTBeta, "rlc-hirt: HIRT's b")
	fs.StringVar(&o.payload, "payload", "16:160", "source payload size range MIN:MAX in bytes")
	fs.StringVar(&o.sweep, "sweep", "", "run a figure's sweep: uniform, ge, starlink or all")
	fs.IntVar(&o.gePoints, "ge-points", 100, "points of the Gilbert-Elliott design")
	fs.IntVar(&o.workers, "workers", 0, "runs at once (default GOMAXPROCS)")
	fs.BoolVar(&o.jsonOut, "json", false, "print JSON instead of a table")
	fs.StringVar(&o.csvFile, "csv", "", "also write every run as CSV to `FILE`")
	fs.StringVar(&o.plotFile, "plot", "", "also draw the figure to `FILE.png`")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
}

func runSim(args []string, stdout, stderr io.Writer) error {
	var o simOptions
	fs := newFlagSet("sim", simSynopsis, stderr)
	o.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !flagWasSet(fs, "warmup") {
		o.warmup = -1 // the run's own default: none for one run, some for a sweep
	}
	schemes, err := o.schemeConfigs()
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	if o.sweep != "" {
		return o.runSweeps(schemes, stdout, stderr)
	}
	return o.runOnce(schemes, stdout)
}

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// check validates the flags that no constructor checks.
func (o *simOptions) check() error {
	var err error
	o.minPayload, o.maxPayload, err = parsePair("--payload", o.payload)
	if err != nil {
		return err
	}
	switch {
	case o.minPayload > o.maxPayload || o.maxPayload > fec.MaxSymbolSize:
		return usageErr("--payload %s: want MIN <= MAX <= %d", o.payload, fec.MaxSymbolSize)
	case o.packets < 0:
		return usageErr("--packets %d is negative", o.packets)
	case o.rtt < 0:
		return usageErr("--rtt-packets %d is negative", o.rtt)
	case o.gePoints < 1:
		return usageErr("--ge-points %d, want at least 1", o.gePoints)
	case o.warmup < -1: // -1: not set
		return usageErr("--warmup %d is negative", o.warmup)
	}
	if o.sweep == "" {
		if _, err := loss.Parse(o.loss, o.seed); err != nil {
			return usageErr("--loss: %v", err)
		}
		return nil
	}
	if _, ok := sweepPoints(o.sweep, 1); !ok && o.sweep != "all" {
		return usageErr("--sweep %q: want uniform, ge, starlink or all", o.sweep)
	}
	return nil
}

// parsePair parses "A:B" into two non-negative integers.
func parsePair(flagName, v string) (int, int, error) {
	a, b, ok := strings.Cut(v, ":")
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if !ok || errA != nil || errB != nil || x < 0 || y < 0 {
		return 0, 0, usageErr("%s %q: want two non-negative integers A:B", flagName, v)
	}
	return x, y, nil
}

// schemeConfigs builds the scheme list from --scheme and the parameter
// flags, and checks each.
func (o *simOptions) schemeConfigs() ([]fecsim.SchemeConfig, error) {
	names := o.schemes
	if names == "" {
		names = fecsim.RLCAdaptive
		if o.sweep != "" {
			names = "all"
		}
	}
	list := strings.Split(names, ",")
	if names == "all" {
		list = fecsim.SchemeNames
	}
	fixedK, fixedR, err := parsePair("--fixed", o.fixed)
	if err != nil {
		return nil, err
	}
	rsD, rsP, err := parsePair("--rs", o.rs)
	if err != nil {
		return nil, err
	}
	build := func(name string) fecsim.SchemeConfig {
		return fecsim.SchemeConfig{
			Name: strings.TrimSpace(name), Window: o.window,
			FixedSources: fixedK, FixedRepairs: fixedR, XORK: o.xorK,
			RSData: rsD, RSParity: rsP, Maelstrom: o.maelstrom, HIRTBeta: o.hirtB,
		}
	}
	// Every scheme's parameter flags are checked, used or not, so that a
	// typo never goes unnoticed.
	for _, name := range fecsim.SchemeNames {
		if err := build(name).Validate(); err != nil {
			return nil, usageErr("parameters of %s: %v", name, err)
		}
	}
	var out []fecsim.SchemeConfig
	for _, name := range list {
		c := build(name)
		if err := c.Validate(); err != nil {
			return nil, usageErr("--scheme %s: %v", c.Name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// runOnce runs each scheme once over --loss.
func (o *simOptions) runOnce(schemes []fecsim.SchemeConfig, stdout io.Writer) error {
	runs := make([]fecsim.Result, 0, len(schemes))
	for _, s := range schemes {
		r, err := fecsim.Run(fecsim.RunConfig{
			Scheme: s, Loss: o.loss, Packets: o.packets, Seed: o.seed, RTTPackets: o.rttPackets(),
			Warmup: max(o.warmup, 0), MinPayload: o.minPayload, MaxPayload: o.maxPayload,
		})
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	if err := o.writeFiles(map[string][]fecsim.PointResult{"run": {{Point: fecsim.Point{Name: o.loss, Loss: o.loss}, Results: runs}}}, []string{"run"},
		[]report.Panel{fecsim.TradeoffPanel("Overhead and recovery, "+runs[0].Loss, runs)}); err != nil {
		return err
	}
	if o.jsonOut {
		if len(runs) == 1 {
			return report.WriteJSON(stdout, runs[0])
		}
		return report.WriteJSON(stdout, struct {
			Results []fecsim.Result `json:"results"`
		}{runs})
	}
	title := fmt.Sprintf("%s, %d packets, seed %d, feedback delay %d packets", runs[0].Loss, runs[0].Packets, o.seed, runs[0].RTTPackets)
	return fecsim.RunsTable(title, runs).WriteText(stdout)
}

// rttPackets maps --rtt-packets 0 (instant feedback) to fecsim's
// convention, where 0 means the default.
func (o *simOptions) rttPackets() int {
	if o.rtt == 0 {
		return -1
	}
	return o.rtt
}

// writeFiles writes --csv and --plot, if asked.
func (o *simOptions) writeFiles(sweeps map[string][]fecsim.PointResult, order []string, panels []report.Panel) error {
	if o.csvFile != "" {
		if err := writeCSVFile(o.csvFile, fecsim.CSVTable(sweeps, order)); err != nil {
			return err
		}
	}
	if o.plotFile != "" {
		fig := report.Figure{Columns: 2, Panels: panels, SharedLegend: true}
		if err := fig.SavePNG(o.plotFile); err != nil {
			return err
		}
	}
	return nil
}

func writeCSVFile(path string, t *report.Table) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return t.WriteCSV(f)
}

// sweepPoints returns the points of a named sweep.
func sweepPoints(name string, gePoints int) ([]fecsim.Point, bool) {
	switch name {
	case "uniform":
		return fecsim.UniformPoints(), true
	case "ge":
		return fecsim.GEPoints(gePoints), true
	case "starlink":
		return fecsim.StarlinkPoints(), true
	}
	return nil, false
}

// sweepOutput is the --json form of a sweep.
type sweepOutput struct {
	Sweep   string               `json:"sweep"`
	Packets int                  `json:"packets"`
	Warmup  int                  `json:"warmup"`
	Points  []fecsim.PointResult `json:"points"`
	Summary []fecsim.Summary     `json:"summary"`
}

// runSweeps runs the --sweep figure sets and prints their tables.
func (o *simOptions) runSweeps(schemes []fecsim.SchemeConfig, stdout, stderr io.Writer) error {
	names := []string{o.sweep}
	if o.sweep == "all" {
		names = []string{"uniform", "ge", "starlink"}
	}
	cfg := fecsim.SweepConfig{
		Schemes: schemes, Packets: o.packets, Warmup: o.warmup, Seed: o.seed, RTTPackets: o.rttPackets(),
		MinPayload: o.minPayload, MaxPayload: o.maxPayload, Workers: o.workers,
	}
	if cfg.Packets == 0 {
		cfg.Packets = sweepPackets
	}
	if cfg.Warmup < 0 {
		cfg.Warmup = sweepWarmup
	}
	progress := newProgress(stderr, o.quiet)
	results := map[string][]fecsim.PointResult{}
	var outputs []sweepOutput
	var panels []report.Panel
	for _, name := range names {
		cfg.Points, _ = sweepPoints(name, o.gePoints)
		cfg.Progress = progress.reporter(name)
		res, err := fecsim.Sweep(cfg)
		progress.done()
		if err != nil {
			return err
		}
		results[name] = res
		outputs = append(outputs, sweepOutput{Sweep: name, Packets: cfg.Packets, Warmup: cfg.Warmup, Points: res, Summary: fecsim.Summarize(res)})
		panels = append(panels, sweepPanels(name, res)...)
	}
	if err := o.writeFiles(results, names, panels); err != nil {
		return err
	}
	if o.jsonOut {
		return report.WriteJSON(stdout, struct {
			Sweeps []sweepOutput `json:"sweeps"`
		}{outputs})
	}
	return writeSweepTables(stdout, outputs, o.rttPackets())
}

// sweepPanels are the figure panels of one sweep.
func sweepPanels(name string, res []fecsim.PointResult) []report.Panel {
	switch name {
	case "uniform":
		return fecsim.UniformPanels(res)
	case "ge":
		return fecsim.GEPanels(res)
	}
	return []report.Panel{fecsim.TradeoffPanel("Starlink fit (GE p=0.00151, r=1/3)", res[0].Results)}
}

// writeSweepTables prints each sweep the way it reads best: the uniform
// sweep as a matrix, the GE design as a per-scheme summary, the Starlink
// point as one row per scheme.
func writeSweepTables(w io.Writer, outs []sweepOutput, rtt int) error {
	for i, out := range outs {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		head := fmt.Sprintf("%d packets per run after a %d-packet warm-up, feedback delay %d packets", out.Packets, out.Warmup, max(rtt, 0))
		var t *report.Table
		switch out.Sweep {
		case "uniform":
			t = fecsim.MatrixTable("Uniform loss (figure 10), overhead / recovered; "+head, out.Points)
		case "ge":
			t = fecsim.SummaryTable(fmt.Sprintf("Gilbert-Elliott design (figure 11a), %d points; %s", len(out.Points), head), out.Summary)
		default:
			t = fecsim.RunsTable("Starlink fit (figure 11b), "+out.Points[0].Point.Loss+"; "+head, out.Points[0].Results)
		}
		if err := t.WriteText(w); err != nil {
			return err
		}
	}
	return nil
}

// progress prints "sim: uniform 12/66 runs" on a terminal's stderr,
// rewriting one line; elsewhere it stays silent.
type progress struct {
	w      io.Writer
	active bool
}

func newProgress(stderr io.Writer, quiet bool) *progress {
	f, ok := stderr.(*os.File)
	if quiet || !ok {
		return &progress{}
	}
	st, err := f.Stat()
	return &progress{w: stderr, active: err == nil && st.Mode()&os.ModeCharDevice != 0}
}

func (p *progress) reporter(name string) func(done, total int) {
	if !p.active {
		return nil
	}
	return func(done, total int) {
		fmt.Fprintf(p.w, "\rsim: %s sweep, %d/%d runs", name, done, total)
	}
}

func (p *progress) done() {
	if p.active {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
