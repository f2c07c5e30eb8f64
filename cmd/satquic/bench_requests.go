//go:build linux

package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/internal/report"
	"github.com/satquic/satquic/netsim"
)

const benchRequestsSynopsis = `bench requests [--profile P] [--size 10kB] [--requests N] [--parallel N] [--runs N] [--gap D] [--seed S] [--stacks S1,S2] [--cc C] [--json FILE]

HIRT's HTTP benchmark (seed 002) in virtual time: each run is one
connection that requests --size bytes --requests times over a fresh
seeded path, in --parallel flows under way at once (default 5, as HIRT's
wrk runs; HTTP/3 multiplexes them on the connection, so its FEC protects
them together); each flow waits for its response, then --gap, before its
next request (wrk waits for nothing: --gap 0). --parallel 1 makes the
requests strictly one after the other. The table gives the distribution
of request completion times over all runs, the FEC overhead and the
server's retransmissions.
Stacks: satquic (FEC, policy auto), satquic-hide, satquic-signal, satquic-nofec.`

func runBenchRequests(args []string, stdout, stderr io.Writer) error {
	var cfg bench.RequestsConfig
	var profile, size, stacks, jsonPath string
	fs := newFlagSet("bench requests", benchRequestsSynopsis, stderr)
	fs.StringVar(&profile, "profile", "starlink", "network profile ("+strings.Join(netsim.ProfileNames(), ", ")+")")
	fs.StringVar(&size, "size", "10kB", "response size")
	fs.IntVar(&cfg.Requests, "requests", 1000, "requests per run (one connection), over all flows")
	fs.IntVar(&cfg.Parallel, "parallel", 5, "request flows under way at once on the connection (HIRT: 5)")
	fs.IntVar(&cfg.Runs, "runs", 5, "runs per stack, each over its own seeded path")
	fs.DurationVar(&cfg.Gap, "gap", 20*time.Millisecond, "pause between a response and the flow's next request")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the runs")
	fs.StringVar(&stacks, "stacks", "satquic,satquic-nofec", "comma-separated satquic stacks")
	fs.StringVar(&jsonPath, "json", "", "also write the results to `FILE` as JSON")
	fs.StringVar(&cfg.CongestionControl, "cc", "", "congestion controller of the satquic stacks: cubic, newreno or bbr (default: the library's)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var err error
	if cfg.Profile, err = netsim.LookupProfile(profile); err != nil {
		return usageErr("%v", err)
	}
	sizes, err := bench.ParseSizes(size)
	if err != nil || len(sizes) != 1 {
		return usageErr("--size %q: want one size such as 10kB", size)
	}
	cfg.Size = sizes[0]
	switch {
	case cfg.Requests < 1:
		return usageErr("--requests %d, want at least 1", cfg.Requests)
	case cfg.Parallel < 1:
		return usageErr("--parallel %d, want at least 1", cfg.Parallel)
	case cfg.Runs < 1:
		return usageErr("--runs %d, want at least 1", cfg.Runs)
	case cfg.Gap < 0:
		return usageErr("--gap %v is negative", cfg.Gap)
	}
	for _, s := range strings.Split(stacks, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.Stacks = append(cfg.Stacks, s)
		}
	}
	if len(cfg.Stacks) == 0 {
		return usageErr("--stacks names no stack")
	}
	cfg.Progress = stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	results, err := bench.RunRequests(ctx, cfg)
	if err != nil {
		return err
	}
	if err := bench.RequestsTable(cfg, results).WriteText(stdout); err != nil {
		return err
	}
	doc := struct {
		Experiment string                 `json:"experiment"`
		Command    []string               `json:"command"`
		Version    string                 `json:"satquic_version"`
		Machine    bench.MachineInfo      `json:"machine"`
		Results    []bench.RequestsResult `json:"results"`
	}{"requests", append([]string{"satquic", "bench", "requests"}, args...), version(), bench.Machine(), results}
	return writeOutput(jsonPath, func(w io.Writer) error { return report.WriteJSON(w, doc) })
}
