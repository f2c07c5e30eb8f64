package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/satquic/satquic/netsim"
)

// DownloadConfig configures the download experiment.
type DownloadConfig struct {
	// Profile is the network path; each run seeds it afresh.
	Profile netsim.Profile
	// Sizes are the body sizes in bytes.
	Sizes []int64
	// Runs is the number of downloads per stack and size.
	Runs int
	// Seed is the experiment's seed; run r's links use
	// netsim.DeriveSeed(Seed, r).
	Seed uint64
	// Stacks are compared in the same runs.
	Stacks []Stack
	// Paths starts the path of each download (unused when Virtual).
	Paths PathStarter
	// Virtual runs every download over the simulator in virtual time
	// (VirtualStack) instead of the emulator; times are simulated.
	Virtual bool
	// Timeout bounds one download; 0 means 30 s plus 20 times its
	// physical limit in real time, and 10 min plus 100 times it in
	// simulated time.
	Timeout time.Duration
	// Progress, when set, receives a line per download.
	Progress io.Writer
}

// Path is the emulated path of one download.
type Path interface {
	Env() Env
	// Stats are the emulator's counters so far.
	Stats() PathStats
	Close() error
}

// PathStats are the emulator counters a run records. They are the
// emulator's (package emulate, which needs Linux), copied so that the
// experiments in virtual time build everywhere.
type PathStats struct {
	Down, Up DirectionStats
	// HighPriority: every packet thread of the emulator ran at real-time
	// priority.
	HighPriority bool
}

// DirectionStats are one direction's counters.
type DirectionStats struct {
	DroppedLoss, DroppedQueue int64
	// Late counts packets that left the emulator later than
	// emulate.LateThreshold after their due time.
	Late uint64
}

// PathStarter starts a path with a profile's (seeded) links.
type PathStarter func(p netsim.Profile) (Path, error)

// RunRecord is one download.
type RunRecord struct {
	Run       int     `json:"run"`
	Stack     string  `json:"stack"`
	SizeBytes int64   `json:"size_bytes"`
	Seed      uint64  `json:"seed"`
	Seconds   float64 `json:"seconds"`
	// GoodputMbps is the body's bits over Seconds, in Mbit/s (0 when
	// the download timed out).
	GoodputMbps float64 `json:"goodput_mbps"`
	// TimedOut: the download did not complete within the timeout;
	// Seconds is the timeout, a lower bound of its time.
	TimedOut bool    `json:"timed_out,omitempty"`
	LimitS   float64 `json:"limit_s"`
	Detail   string  `json:"detail,omitempty"`
	// What the emulated path did during the run: packets the loss model
	// dropped, packets the queue dropped, and packets the emulator sent
	// more than its late threshold after their due time (a run with many
	// of those measured the machine, not the path).
	DownLost   int64  `json:"down_lost"`
	UpLost     int64  `json:"up_lost"`
	QueueDrops int64  `json:"queue_drops"`
	Late       uint64 `json:"late"`
	// UpBytes and DownBytes are the bytes offered to the uplink (client
	// to server: ACKs and the request) and the downlink, in virtual time
	// only: their ratio is what the download costs a thin return link.
	UpBytes   int64 `json:"up_bytes,omitempty"`
	DownBytes int64 `json:"down_bytes,omitempty"`
}

// Result summarizes one stack at one size.
type Result struct {
	Stack       string  `json:"stack"`
	SizeBytes   int64   `json:"size_bytes"`
	Runs        int     `json:"runs"`
	MedianS     float64 `json:"median_s"`
	P90S        float64 `json:"p90_s"`
	P99S        float64 `json:"p99_s"`
	MinS        float64 `json:"min_s"`
	MaxS        float64 `json:"max_s"`
	LimitS      float64 `json:"limit_s"`
	MedianRatio float64 `json:"median_over_limit"`
	// TimedOut counts the runs that did not complete within the timeout;
	// they count as the timeout in the statistics, which are then lower
	// bounds.
	TimedOut int `json:"timed_out"`
	// MedianGoodputMbps is the body's bits over the median time, in
	// Mbit/s; 0 when the median is a timed-out run's (MedianTimedOut).
	// Mbit/s (seed 004 compares stacks by it).
	MedianGoodputMbps float64   `json:"median_goodput_mbps"`
	LimitFormula      string    `json:"limit_formula"`
	SamplesS          []float64 `json:"samples_s"`
}

// Outcome is everything the experiment measured.
type Outcome struct {
	Runs    []RunRecord
	Results []Result
	// HighPriority reports that the emulator's packet threads ran at
	// high priority in every run.
	HighPriority bool
}

// RunSeed is the link seed of run r (counted from 1).
func RunSeed(seed uint64, r int) uint64 { return netsim.DeriveSeed(seed, uint64(r)) }

// Order returns the order of downloads: run by run, size by size, every
// stack in turn, so that a drift of the machine over time hits all stacks
// and sizes alike. Within a run the stacks take turns at going first (run
// r starts with stack r-1 modulo their number), so that none always runs
// right after a set-up or always last.
func Order(runs, sizes, stacks int) [][3]int {
	var out [][3]int
	for r := 1; r <= runs; r++ {
		for z := range sizes {
			for k := range stacks {
				out = append(out, [3]int{r, z, (k + r - 1) % stacks})
			}
		}
	}
	return out
}

// RunDownload runs the experiment. On an error or a cancelled context it
// returns what completed with the error; every path and server it started
// is closed either way.
func RunDownload(ctx context.Context, cfg DownloadConfig) (*Outcome, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	out := &Outcome{HighPriority: true}
	order := Order(cfg.Runs, len(cfg.Sizes), len(cfg.Stacks))
	for i, o := range order {
		r, size, st := o[0], cfg.Sizes[o[1]], cfg.Stacks[o[2]]
		if err := ctx.Err(); err != nil {
			out.summarize(cfg)
			return out, fmt.Errorf("interrupted after %d of %d downloads: %w", i, len(order), context.Cause(ctx))
		}
		rec, highPrio, err := downloadOnce(ctx, cfg, r, st, size)
		if err != nil {
			out.summarize(cfg)
			return out, fmt.Errorf("run %d, %s, %s: %w", r, st.Name(), FormatSize(size), err)
		}
		out.HighPriority = out.HighPriority && highPrio
		out.Runs = append(out.Runs, rec)
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "[%d/%d] run %d/%d  %-10s %7s  %s%8.3f s  (limit %.3f s, %.2fx; lost down %d up %d%s)\n",
				i+1, len(order), r, cfg.Runs, st.Name(), FormatSize(size), timedOutMark(rec.TimedOut), rec.Seconds, rec.LimitS,
				ratio(rec.Seconds, rec.LimitS), rec.DownLost, rec.UpLost, lateNote(rec.Late))
		}
	}
	out.summarize(cfg)
	return out, nil
}

// timedOutMark prefixes the time of a download that timed out: it took
// longer.
func timedOutMark(timedOut bool) string {
	if timedOut {
		return ">"
	}
	return ""
}

func lateNote(late uint64) string {
	if late == 0 {
		return ""
	}
	return fmt.Sprintf("; emulator late %d", late)
}

func (cfg DownloadConfig) check() error {
	switch {
	case cfg.Runs < 1:
		return fmt.Errorf("bench: runs must be at least 1, not %d", cfg.Runs)
	case len(cfg.Sizes) == 0:
		return errors.New("bench: no sizes")
	case len(cfg.Stacks) == 0:
		return errors.New("bench: no stacks")
	case cfg.Paths == nil && !cfg.Virtual:
		return errors.New("bench: no path starter")
	case cfg.Virtual:
		if err := CheckVirtual(cfg.Stacks); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, s := range cfg.Stacks {
		if seen[s.Name()] {
			return fmt.Errorf("bench: stack %s given twice", s.Name())
		}
		seen[s.Name()] = true
	}
	return nil
}

// downloadOnce measures one download on a fresh path and server.
func downloadOnce(ctx context.Context, cfg DownloadConfig, r int, st Stack, size int64) (rec RunRecord, highPrio bool, err error) {
	seed := RunSeed(cfg.Seed, r)
	limit := Limit(cfg.Profile, st.HandshakeRTTs(), size)
	rec = RunRecord{Run: r, Stack: st.Name(), SizeBytes: size, Seed: seed, LimitS: limit.Seconds()}
	if cfg.Virtual {
		rec, err = virtualOnce(ctx, cfg, rec, st.(VirtualStack), limit)
		return rec, true, err
	}
	path, err := cfg.Paths(cfg.Profile.WithSeed(seed))
	if err != nil {
		return rec, false, fmt.Errorf("starting the emulated path: %w", err)
	}
	defer func() { err = errors.Join(err, path.Close()) }()
	env := path.Env()
	env.Profile = cfg.Profile.WithSeed(seed)
	ep, err := st.Start(ctx, env)
	if err != nil {
		return rec, false, err
	}
	defer func() { err = errors.Join(err, ep.Close()) }()
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 30*time.Second + 20*limit
	}
	dctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("no completion within %v", timeout))
	defer cancel()
	d, err := ep.Download(dctx, size)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return rec, false, fmt.Errorf("interrupted: %w", context.Cause(ctx))
	case dctx.Err() != nil:
		rec = rec.timedOut(timeout, fmt.Sprint(err))
		st2 := path.Stats()
		rec.DownLost, rec.UpLost = st2.Down.DroppedLoss, st2.Up.DroppedLoss
		rec.QueueDrops, rec.Late = st2.Down.DroppedQueue+st2.Up.DroppedQueue, st2.Down.Late+st2.Up.Late
		return rec, st2.HighPriority, nil
	default:
		return rec, false, err
	}
	st2 := path.Stats()
	rec.Seconds = d.Elapsed.Seconds()
	rec.GoodputMbps = Goodput(rec.SizeBytes, rec.Seconds)
	rec.Detail = d.Detail
	rec.DownLost, rec.UpLost = st2.Down.DroppedLoss, st2.Up.DroppedLoss
	rec.QueueDrops = st2.Down.DroppedQueue + st2.Up.DroppedQueue
	rec.Late = st2.Down.Late + st2.Up.Late
	return rec, st2.HighPriority, nil
}

// summarize fills Results from Runs: one per size and stack, in the order
// of the configuration.
func (o *Outcome) summarize(cfg DownloadConfig) {
	o.Results = nil
	for _, size := range cfg.Sizes {
		for _, st := range cfg.Stacks {
			var samples []float64
			timedOut := 0
			for _, rec := range o.Runs {
				if rec.Stack == st.Name() && rec.SizeBytes == size {
					samples = append(samples, rec.Seconds)
					if rec.TimedOut {
						timedOut++
					}
				}
			}
			if len(samples) == 0 {
				continue
			}
			s := Summarize(samples)
			limit := Limit(cfg.Profile, st.HandshakeRTTs(), size).Seconds()
			o.Results = append(o.Results, Result{
				Stack: st.Name(), SizeBytes: size, Runs: len(samples),
				MedianS: s.Median, P90S: s.P90, P99S: s.P99, MinS: s.Min, MaxS: s.Max,
				LimitS: limit, MedianRatio: ratio(s.Median, limit), MedianGoodputMbps: Goodput(size, s.Median),
				TimedOut:     timedOut,
				LimitFormula: LimitFormula(cfg.Profile, st.HandshakeRTTs()),
				SamplesS:     samples,
			})
			if r := &o.Results[len(o.Results)-1]; r.MedianTimedOut() {
				r.MedianGoodputMbps = 0
			}
		}
	}
}

// MedianTimedOut reports whether the median is a timeout rather than a
// time: the timed-out runs, which count as their timeout, are the slowest,
// and at least half of the runs.
func (r Result) MedianTimedOut() bool { return r.TimedOut > 0 && 2*r.TimedOut >= r.Runs }

// timedOut records a download that did not complete within timeout:
// its time is at least the timeout. why says what the stack saw.
func (rec RunRecord) timedOut(timeout time.Duration, why string) RunRecord {
	rec.TimedOut = true
	rec.Seconds = timeout.Seconds()
	rec.GoodputMbps = 0
	rec.Detail = strings.TrimSpace("timed out; " + why)
	return rec
}

// Goodput is size bytes over seconds, in Mbit/s; 0 for no time.
func Goodput(size int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(size) * 8 / seconds / 1e6
}

// ratio is t over the limit, or 0 when a path without delay or rate limit
// makes the limit 0 (JSON has no infinity).
func ratio(t, limit float64) float64 {
	if limit <= 0 {
		return 0
	}
	return t / limit
}
