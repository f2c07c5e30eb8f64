package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
)

// requireNamespaces skips a test that needs the emulator's namespace mode,
// saying what is missing.
func requireNamespaces(t *testing.T) {
	t.Helper()
	testkit.RequireNamespaces(t, "the download experiment")
	// The emulator's packet threads need spare Ps, as in the command.
	prev := runtime.GOMAXPROCS(max(16, runtime.NumCPU()))
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// tinyProfile is a short, lossy path: a download of a few hundred
// kilobytes takes a fraction of a second, and loss shows in the counters.
func tinyProfile() netsim.Profile {
	link := netsim.LinkConfig{RateBps: 20e6, Delay: 10 * time.Millisecond, Loss: "uniform:0.01"}
	return netsim.Profile{Name: "tiny", Description: "test path: 20 Mbit/s, 10 ms each way, 1% loss", Down: link, Up: link}
}

func testPrefix(tag string) string { return fmt.Sprintf("sqbt%s%d", tag, os.Getpid()%100000) }

func namespacesLeft(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatalf("ip netns list: %v", err)
	}
	var left []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], prefix+"-") {
			left = append(left, f[0])
		}
	}
	return left
}

func TestDownloadOverNamespaces(t *testing.T) {
	requireNamespaces(t)
	var stacks []Stack
	for _, name := range []string{"tcp-cubic", "tcp-bbr"} {
		s, err := LookupStack(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Check(); err != nil {
			t.Skipf("%v; skipping", err)
		}
		stacks = append(stacks, s)
	}
	prefix := testPrefix("d")
	var progress bytes.Buffer
	cfg := DownloadConfig{
		Profile: tinyProfile(), Sizes: []int64{300e3}, Runs: 2, Seed: 7, Stacks: stacks,
		Paths: NamespacePaths(prefix), Timeout: 20 * time.Second, Progress: &progress,
	}
	out, err := RunDownload(context.Background(), cfg)
	t.Logf("progress:\n%s", progress.String())
	if err != nil {
		t.Fatal(err)
	}
	if left := namespacesLeft(t, prefix); len(left) > 0 {
		t.Errorf("namespaces left behind: %v", left)
	}
	if len(out.Runs) != 4 {
		t.Fatalf("%d downloads, want 2 runs x 2 stacks", len(out.Runs))
	}
	limit := Limit(cfg.Profile, 2, 300e3).Seconds() // 3 x 20 ms + 120 ms
	if limit != 0.18 {
		t.Errorf("limit %v s, want 0.18", limit)
	}
	lost := int64(0)
	for _, rec := range out.Runs {
		// Nothing beats the physical limit: a time below it means the
		// bytes did not cross the emulated path, or the clock is wrong.
		if rec.Seconds < rec.LimitS || rec.Seconds > 10 {
			t.Errorf("%s run %d: %.3f s, limit %.3f s", rec.Stack, rec.Run, rec.Seconds, rec.LimitS)
		}
		if want := "cc=" + strings.TrimPrefix(rec.Stack, "tcp-"); rec.Detail != want {
			t.Errorf("%s run %d: detail %q, want %q", rec.Stack, rec.Run, rec.Detail, want)
		}
		lost += rec.DownLost + rec.UpLost
	}
	if lost == 0 {
		t.Error("four downloads over a 1% loss path lost nothing: the loss model was not in the path")
	}

	// The JSON document carries the summaries and what reproduces them.
	doc := NewDocument(NewMetadata(cfg, "test", nil), out)
	var buf bytes.Buffer
	if err := doc.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	results, _ := got["results"].([]any)
	if len(results) != 2 {
		t.Fatalf("JSON results: %v", got["results"])
	}
	for _, r := range results {
		m := r.(map[string]any)
		for _, k := range []string{"stack", "size_bytes", "runs", "median_s", "p90_s", "p99_s", "min_s", "max_s", "limit_s"} {
			if _, ok := m[k]; !ok {
				t.Errorf("JSON result lacks %q: %v", k, m)
			}
		}
		if m["runs"] != 2.0 || m["size_bytes"] != 300e3 || m["limit_s"] != 0.18 {
			t.Errorf("JSON result %v", m)
		}
	}
	meta := got["metadata"].(map[string]any)
	for _, path := range []string{"satquic_version", "go_version", "date", "seed", "profile.down.rate_bps",
		"profile.up.loss", "profile.rtt_ms", "machine.cpu_model", "machine.cores", "machine.kernel", "emulator.mode"} {
		var v any = meta
		for _, k := range strings.Split(path, ".") {
			v = v.(map[string]any)[k]
		}
		if v == nil || v == "" {
			t.Errorf("JSON metadata lacks %s", path)
		}
	}
	if meta["seed"] != 7.0 || meta["profile"].(map[string]any)["down"].(map[string]any)["rate_bps"] != 20e6 {
		t.Errorf("JSON metadata seed %v, profile %v", meta["seed"], meta["profile"])
	}
}

func TestDownloadInterruptedCleansUp(t *testing.T) {
	requireNamespaces(t)
	st, err := LookupStack("tcp-cubic")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Check(); err != nil {
		t.Skipf("%v; skipping", err)
	}
	prefix := testPrefix("i")
	// 50 MB at 20 Mbit/s takes 20 s; the interrupt comes long before.
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(700*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	_, err = RunDownload(ctx, DownloadConfig{
		Profile: tinyProfile(), Sizes: []int64{50e6}, Runs: 1, Seed: 1, Stacks: []Stack{st},
		Paths: NamespacePaths(prefix),
	})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("interrupted download: error %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the interrupt took %v to stop the download", d)
	}
	if left := namespacesLeft(t, prefix); len(left) > 0 {
		t.Errorf("namespaces left behind after the interrupt: %v", left)
	}
}
