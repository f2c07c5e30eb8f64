package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// The fakes below let the experiment loop be tested without root: a path
// that records its seed, and a stack whose downloads take a time chosen
// from the run, the size and the stack.

type fakePath struct {
	log  *eventLog
	seed uint64
}

func (p *fakePath) Env() Env {
	h := Host{Addr: netip.MustParseAddr("127.0.0.1"), Do: func(fn func() error) error { return fn() }}
	return Env{Server: h, Client: h}
}

func (p *fakePath) Stats() PathStats {
	return PathStats{HighPriority: true, Down: DirectionStats{DroppedLoss: 3}, Up: DirectionStats{DroppedLoss: 1}}
}

func (p *fakePath) Close() error { p.log.add("path-close"); return nil }

type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, fmt.Sprintf(format, a...))
}

type fakeStack struct {
	name string
	log  *eventLog
	// seconds gives each download's time; fail makes a download fail.
	seconds func(seed uint64, size int64) float64
	fail    func(seed uint64, size int64) error
	seed    *uint64 // the seed of the current path
}

func (s *fakeStack) Name() string       { return s.name }
func (s *fakeStack) HandshakeRTTs() int { return 1 }
func (s *fakeStack) Check() error       { return nil }

func (s *fakeStack) Start(ctx context.Context, env Env) (Endpoints, error) {
	s.log.add("start %s", s.name)
	return &fakeEndpoints{s: s}, nil
}

type fakeEndpoints struct{ s *fakeStack }

func (e *fakeEndpoints) Download(ctx context.Context, size int64) (Download, error) {
	e.s.log.add("download %s %d seed %d", e.s.name, size, *e.s.seed)
	if e.s.fail != nil {
		if err := e.s.fail(*e.s.seed, size); err != nil {
			return Download{}, err
		}
	}
	secs := e.s.seconds(*e.s.seed, size)
	return Download{Elapsed: time.Duration(secs * float64(time.Second)), Bytes: size, Detail: "fake"}, nil
}

func (e *fakeEndpoints) Close() error { e.s.log.add("stop %s", e.s.name); return nil }

func fakeConfig(log *eventLog, runs int, sizes []int64, names ...string) (DownloadConfig, *uint64) {
	var seed uint64
	cfg := DownloadConfig{
		Profile: netsim.Profile{Name: "tiny",
			Down: netsim.LinkConfig{RateBps: 8e6, Delay: 10 * time.Millisecond},
			Up:   netsim.LinkConfig{RateBps: 8e6, Delay: 10 * time.Millisecond}},
		Sizes: sizes, Runs: runs, Seed: 42,
		Paths: func(p netsim.Profile) (Path, error) {
			seed = p.Down.Seed
			log.add("path %d", p.Down.Seed)
			return &fakePath{log: log, seed: seed}, nil
		},
	}
	for i, n := range names {
		cfg.Stacks = append(cfg.Stacks, &fakeStack{name: n, log: log, seed: &seed,
			seconds: func(seed uint64, size int64) float64 { return float64(size)/1e6 + float64(i) + float64(seed%1000)/1e4 }})
	}
	return cfg, &seed
}

func TestOrderInterleavesAndRotates(t *testing.T) {
	got := Order(2, 2, 3)
	want := [][3]int{
		{1, 0, 0}, {1, 0, 1}, {1, 0, 2}, {1, 1, 0}, {1, 1, 1}, {1, 1, 2},
		{2, 0, 1}, {2, 0, 2}, {2, 0, 0}, {2, 1, 1}, {2, 1, 2}, {2, 1, 0},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Order(2, 2, 3) = %v, want %v", got, want)
	}
}

func TestRunDownloadLoop(t *testing.T) {
	log := &eventLog{}
	cfg, _ := fakeConfig(log, 3, []int64{1e6, 2e6}, "a", "b")
	var progress strings.Builder
	cfg.Progress = &progress
	out, err := RunDownload(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Runs) != 12 {
		t.Fatalf("%d records, want 3 runs x 2 sizes x 2 stacks", len(out.Runs))
	}
	// Every download has a path and a server of its own, closed after it,
	// and all stacks of a run share the run's seed.
	for i, rec := range out.Runs {
		if want := RunSeed(42, rec.Run); rec.Seed != want {
			t.Errorf("record %d: seed %d, want RunSeed(42, %d) = %d", i, rec.Seed, rec.Run, want)
		}
		ev := log.events[5*i : 5*i+5]
		want := []string{
			fmt.Sprintf("path %d", rec.Seed), "start " + rec.Stack,
			fmt.Sprintf("download %s %d seed %d", rec.Stack, rec.SizeBytes, rec.Seed),
			"stop " + rec.Stack, "path-close",
		}
		if fmt.Sprint(ev) != fmt.Sprint(want) {
			t.Errorf("download %d: events %q, want %q", i, ev, want)
		}
		if rec.DownLost != 3 || rec.UpLost != 1 || rec.Detail != "fake" {
			t.Errorf("record %d: %+v lacks the path's counters or the stack's detail", i, rec)
		}
	}
	if RunSeed(42, 1) == RunSeed(42, 2) {
		t.Error("two runs share a seed")
	}
	if !out.HighPriority {
		t.Error("HighPriority lost")
	}
	if n := strings.Count(progress.String(), "\n"); n != 12 {
		t.Errorf("%d progress lines, want 12:\n%s", n, progress.String())
	}
	// One summary per size and stack, in configuration order, over the
	// three samples.
	if len(out.Results) != 4 {
		t.Fatalf("%d results, want 4", len(out.Results))
	}
	for i, r := range out.Results {
		wantStack, wantSize := []string{"a", "b"}[i%2], []int64{1e6, 2e6}[i/2]
		if r.Stack != wantStack || r.SizeBytes != wantSize || r.Runs != 3 || len(r.SamplesS) != 3 {
			t.Errorf("result %d: %s %d with %d runs, want %s %d with 3", i, r.Stack, r.SizeBytes, r.Runs, wantStack, wantSize)
		}
		s := Summarize(r.SamplesS)
		limit := Limit(cfg.Profile, 1, r.SizeBytes).Seconds()
		if r.MedianS != s.Median || r.P90S != s.P90 || r.MinS != s.Min || r.MaxS != s.Max ||
			r.LimitS != limit || math.Abs(r.MedianRatio-s.Median/limit) > 1e-12 {
			t.Errorf("result %d: %+v does not match its samples (%+v) and limit %v", i, r, s, limit)
		}
	}
}

func TestRunDownloadStopsOnError(t *testing.T) {
	log := &eventLog{}
	cfg, _ := fakeConfig(log, 2, []int64{1e6}, "a", "b")
	boom := errors.New("boom")
	cfg.Stacks[1].(*fakeStack).fail = func(seed uint64, _ int64) error {
		if seed == RunSeed(42, 2) {
			return boom
		}
		return nil
	}
	out, err := RunDownload(context.Background(), cfg)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "run 2, b, 1MB") {
		t.Fatalf("error %v, want boom in run 2 of b", err)
	}
	// Run 2 starts with b (the stacks take turns), so only run 1 counts.
	if out == nil || len(out.Runs) != 2 || len(out.Results) != 2 {
		t.Fatalf("partial outcome %+v, want run 1's two downloads", out)
	}
	last := log.events[len(log.events)-2:]
	if fmt.Sprint(last) != fmt.Sprint([]string{"stop b", "path-close"}) {
		t.Errorf("a failed download left its server or path open: %q", log.events)
	}
}

func TestRunDownloadCancelled(t *testing.T) {
	log := &eventLog{}
	cfg, _ := fakeConfig(log, 5, []int64{1e6}, "a")
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Stacks[0].(*fakeStack).fail = func(seed uint64, _ int64) error {
		if seed == RunSeed(42, 2) {
			cancel()
		}
		return nil
	}
	out, err := RunDownload(ctx, cfg)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 2 of 5") {
		t.Fatalf("error %v, want an interruption after 2 of 5 downloads", err)
	}
	if len(out.Runs) != 2 {
		t.Errorf("%d records kept, want 2", len(out.Runs))
	}
}

func TestRunDownloadRejectsBadConfig(t *testing.T) {
	log := &eventLog{}
	good, _ := fakeConfig(log, 1, []int64{1e6}, "a")
	for name, mutate := range map[string]func(*DownloadConfig){
		"no runs":      func(c *DownloadConfig) { c.Runs = 0 },
		"no sizes":     func(c *DownloadConfig) { c.Sizes = nil },
		"no stacks":    func(c *DownloadConfig) { c.Stacks = nil },
		"no paths":     func(c *DownloadConfig) { c.Paths = nil },
		"stack twice":  func(c *DownloadConfig) { c.Stacks = append(c.Stacks, c.Stacks[0]) },
		"negative run": func(c *DownloadConfig) { c.Runs = -3 },
	} {
		cfg := good
		mutate(&cfg)
		if _, err := RunDownload(context.Background(), cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if len(log.events) != 0 {
		t.Errorf("a rejected configuration started something: %q", log.events)
	}
}

func TestGoodput(t *testing.T) {
	if g := Goodput(100e6, 4); g != 200 {
		t.Errorf("100 MB in 4 s: %v Mbit/s, want 200", g)
	}
	if g := Goodput(1, 0); g != 0 {
		t.Errorf("no time: %v", g)
	}
}
