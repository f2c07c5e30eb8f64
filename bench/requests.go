package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/satquic/satquic/internal/report"
	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/quicsim"
)

// The requests experiment is HIRT's HTTP benchmark (seed 002, figure 7):
// small responses requested on a kept-alive connection over a lossy path,
// and the tail of their completion times. It runs satquic's stacks in
// virtual time: each run is one connection making Requests requests over
// a fresh seeded path, in Parallel flows of sequential requests (HIRT ran
// wrk with 5), which the connection multiplexes as streams.

// RequestsConfig describes a requests experiment.
type RequestsConfig struct {
	Profile netsim.Profile
	// Size is the size of each response, Requests the requests per run
	// (one connection each), Parallel the request flows under way at
	// once (0: 1), Gap the pause between a response and the flow's next
	// request.
	Size     int64
	Requests int
	Parallel int
	Gap      time.Duration
	Runs     int
	Seed     uint64
	// Stacks are satquic stacks (satquic, satquic-hide, satquic-signal,
	// satquic-nofec).
	Stacks []string
	// CongestionControl is the stacks' controller, as
	// quic.Config.CongestionControl names it ("": the library's default).
	CongestionControl string
	// Progress, if set, receives a line per run.
	Progress io.Writer
}

// RequestsResult summarizes one stack's request completion times.
type RequestsResult struct {
	Stack string `json:"stack"`
	// CongestionControl is the controller the stack ran.
	CongestionControl string  `json:"cc"`
	SizeBytes         int64   `json:"size_bytes"`
	Requests          int     `json:"requests"`
	Parallel          int     `json:"parallel"`
	GapMs             float64 `json:"gap_ms"`
	MedianMs          float64 `json:"median_ms"`
	P90Ms             float64 `json:"p90_ms"`
	P99Ms             float64 `json:"p99_ms"`
	P999Ms            float64 `json:"p999_ms"`
	MaxMs             float64 `json:"max_ms"`
	// Overhead is the server's repair packets over all its source and
	// repair packets.
	Overhead float64 `json:"fec_overhead"`
	// Retransmitted and PTOs are the server's, summed over the runs;
	// Recovered counts the packets the client rebuilt with FEC.
	Retransmitted uint64 `json:"retransmitted"`
	PTOs          uint64 `json:"ptos"`
	Recovered     uint64 `json:"recovered"`
}

// RunRequests runs the experiment for each stack.
func RunRequests(ctx context.Context, cfg RequestsConfig) ([]RequestsResult, error) {
	if cfg.Parallel == 0 {
		cfg.Parallel = 1
	}
	if cfg.Runs < 1 || cfg.Requests < 1 || cfg.Size < 0 || cfg.Gap < 0 || cfg.Parallel < 1 {
		return nil, fmt.Errorf("requests: %d runs of %d requests of %d bytes in %d flows, gap %v", cfg.Runs, cfg.Requests, cfg.Size, cfg.Parallel, cfg.Gap)
	}
	var out []RequestsResult
	for _, name := range cfg.Stacks {
		st, err := LookupStack(name)
		if err != nil {
			return nil, err
		}
		sq, ok := st.(*satquicStack)
		if !ok {
			return nil, fmt.Errorf("requests: stack %s cannot run in virtual time (satquic stacks only)", name)
		}
		if err := sq.SetCongestionControl(cfg.CongestionControl); err != nil {
			return nil, err
		}
		res, err := sq.requests(ctx, cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// requests runs the experiment's runs for one satquic stack.
func (s *satquicStack) requests(ctx context.Context, cfg RequestsConfig) (RequestsResult, error) {
	res := RequestsResult{Stack: s.name, CongestionControl: s.CongestionControl(), SizeBytes: cfg.Size, Parallel: cfg.Parallel, GapMs: float64(cfg.Gap) / float64(time.Millisecond)}
	var times []float64
	var sources, repairs uint64
	for r := range cfg.Runs {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("interrupted: %w", context.Cause(ctx))
		}
		seed := RunSeed(cfg.Seed, r)
		out, err := quicsim.Requests(quicsim.RequestsConfig{
			DownloadConfig: quicsim.DownloadConfig{
				Profile: cfg.Profile.WithSeed(seed), Seed: seed, Size: cfg.Size,
				CongestionControl: s.CongestionControl(), MaxDatagramSize: satquicMaxDatagram,
				FEC: s.fec, FECPolicy: s.fecPolicy,
			},
			Requests: cfg.Requests,
			Parallel: cfg.Parallel,
			Gap:      cfg.Gap,
		})
		if err != nil {
			return res, fmt.Errorf("%s, run %d (seed %d): %w", s.name, r+1, seed, err)
		}
		for _, t := range out.Times {
			times = append(times, float64(t)/float64(time.Millisecond))
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "run %d/%d  %-14s %d requests, slowest %v\n", r+1, cfg.Runs, s.name, len(out.Times), slices.Max(out.Times).Round(time.Millisecond))
		}
		sources += out.Server.FEC.SourcesSent
		repairs += out.Server.FEC.RepairsSent
		res.Retransmitted += out.Server.PacketsRetransmitted
		res.PTOs += out.Server.Recovery.PTOs
		res.Recovered += out.Client.FEC.SymbolsRecovered
	}
	res.Requests = len(times)
	res.MedianMs = Percentile(times, 0.5)
	res.P90Ms = Percentile(times, 0.9)
	res.P99Ms = Percentile(times, 0.99)
	res.P999Ms = Percentile(times, 0.999)
	res.MaxMs = Percentile(times, 1)
	if sources+repairs > 0 {
		res.Overhead = float64(repairs) / float64(sources+repairs)
	}
	return res, nil
}

// RequestsTable lays the results out for a terminal.
func RequestsTable(cfg RequestsConfig, results []RequestsResult) *report.Table {
	t := &report.Table{
		Title: fmt.Sprintf("Request completion time (ms), %d B responses, profile %s, %d runs x %d requests in %d flows, gap %v, seed %d",
			cfg.Size, cfg.Profile.Name, cfg.Runs, cfg.Requests, max(cfg.Parallel, 1), cfg.Gap, cfg.Seed),
		Columns: []string{"stack", "requests", "median", "p90", "p99", "p99.9", "max", "fec overhead", "retransmitted", "ptos", "recovered"},
	}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	for _, r := range results {
		_ = t.AddRow(r.Stack, strconv.Itoa(r.Requests), ms(r.MedianMs), ms(r.P90Ms), ms(r.P99Ms), ms(r.P999Ms), ms(r.MaxMs),
			strconv.FormatFloat(100*r.Overhead, 'f', 2, 64)+"%",
			strconv.FormatUint(r.Retransmitted, 10), strconv.FormatUint(r.PTOs, 10), strconv.FormatUint(r.Recovered, 10))
	}
	return t
}
