package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

func virtualConfig(t *testing.T, stacks ...string) DownloadConfig {
	t.Helper()
	p, err := netsim.LookupProfile("seed-ifc")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DownloadConfig{Profile: p, Sizes: []int64{1 << 20, 3 << 20}, Runs: 3, Seed: 11, Virtual: true}
	for _, n := range stacks {
		st, err := LookupStack(n)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Stacks = append(cfg.Stacks, st)
	}
	return cfg
}

// TestVirtualDownload runs the experiment in virtual time without any
// path starter: every time is above the physical limit, runs differ by
// their seeds, and the whole experiment replays exactly.
func TestVirtualDownload(t *testing.T) {
	cfg := virtualConfig(t, "satquic")
	start := time.Now()
	a, err := RunDownload(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d simulated downloads in %v", len(a.Runs), time.Since(start))
	b, err := RunDownload(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != 6 || len(a.Results) != 2 {
		t.Fatalf("%d runs, %d results; want 6 and 2", len(a.Runs), len(a.Results))
	}
	lost := int64(0)
	for i, r := range a.Runs {
		if r.Seconds < r.LimitS || r.Seconds > 20*r.LimitS {
			t.Errorf("run %d: %.3f s against a limit of %.3f s", r.Run, r.Seconds, r.LimitS)
		}
		if r != b.Runs[i] {
			t.Errorf("the replay differs: %+v and %+v", r, b.Runs[i])
		}
		if !strings.Contains(r.Detail, "virtual") {
			t.Errorf("run %d: detail %q does not say it was simulated", r.Run, r.Detail)
		}
		lost += r.DownLost
	}
	if lost == 0 {
		t.Error("no loss over 6 downloads of 0.1% loss: are the links seeded?")
	}
	if a.Runs[0].Seconds == a.Runs[2].Seconds && a.Runs[0].DownLost == a.Runs[2].DownLost {
		t.Errorf("runs 1 and 2 of 1 MB are identical: %+v", a.Runs[0])
	}
}

func TestVirtualDownloadRefusesRealTimeStacks(t *testing.T) {
	cfg := virtualConfig(t, "satquic", "tcp-cubic")
	_, err := RunDownload(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "tcp-cubic runs only in real time") {
		t.Errorf("RunDownload with tcp-cubic in virtual time: %v", err)
	}
}

// --cc reaches the satquic stacks: the run's detail and the metadata name
// the controller; the default is the library's; an unknown name is
// refused; other stacks are left alone.
func TestVirtualDownloadCongestionControl(t *testing.T) {
	cfg := virtualConfig(t, "satquic-nofec")
	if got := NewMetadata(cfg, "test", nil).Stacks[0].CongestionControl; got != "bbr" {
		t.Errorf("default controller %q, want bbr", got)
	}
	if err := SetCongestionControl(cfg.Stacks, "cubic"); err != nil {
		t.Fatal(err)
	}
	if got := NewMetadata(cfg, "test", nil).Stacks[0].CongestionControl; got != "cubic" {
		t.Errorf("controller %q in the metadata, want cubic", got)
	}
	cfg.Runs = 1
	res, err := RunDownload(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Runs {
		if !strings.Contains(r.Detail, "cc=cubic") {
			t.Errorf("detail %q does not name cubic", r.Detail)
		}
	}
	if err := SetCongestionControl(cfg.Stacks, "vegas"); err == nil {
		t.Error("unknown controller accepted")
	}
	tcp := &fakeStack{name: "other"}
	if err := SetCongestionControl([]Stack{tcp}, "bbr"); err != nil {
		t.Errorf("a stack without a choice of controller: %v", err)
	}
}

// TestVirtualDownloadTimeout: a download that does not complete within the
// timeout is recorded as timed out, at the timeout, and the experiment goes
// on with the next one.
func TestVirtualDownloadTimeout(t *testing.T) {
	cfg := virtualConfig(t, "satquic-nofec")
	cfg.Sizes, cfg.Runs, cfg.Timeout = []int64{3 << 20}, 2, 500*time.Millisecond
	out, err := RunDownload(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Runs) != 2 || len(out.Results) != 1 {
		t.Fatalf("%d runs, %d results", len(out.Runs), len(out.Results))
	}
	for _, r := range out.Runs {
		if !r.TimedOut || r.Seconds != 0.5 || r.GoodputMbps != 0 || !strings.HasPrefix(r.Detail, "timed out") {
			t.Errorf("run %d: %+v", r.Run, r)
		}
	}
	if got := out.Results[0].TimedOut; got != 2 {
		t.Errorf("result counts %d timed out runs, want 2", got)
	}
	var b strings.Builder
	doc := NewDocument(NewMetadata(cfg, "test", nil), out)
	if err := doc.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if out.Results[0].MedianGoodputMbps != 0 || !strings.Contains(b.String(), ">0.500") || !strings.Contains(b.String(), "<50.3") {
		t.Errorf("the median of timed-out runs is not shown as a bound: %+v\n%s", out.Results[0], b.String())
	}
	if !strings.Contains(b.String(), "2 of 2 runs timed out") {
		t.Errorf("table lacks the timeout note:\n%s", b.String())
	}
}
