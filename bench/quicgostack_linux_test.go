package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestQuicgoStackOverNamespaces runs quic-go's server and client as
// programs inside the emulator's namespaces, over a short lossy path.
func TestQuicgoStackOverNamespaces(t *testing.T) {
	requireNamespaces(t)
	st := quicgoForTest(t)
	prefix := testPrefix("q")
	var progress bytes.Buffer
	cfg := DownloadConfig{
		Profile: tinyProfile(), Sizes: []int64{300e3}, Runs: 2, Seed: 11, Stacks: []Stack{st},
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
	if len(out.Runs) != 2 {
		t.Fatalf("%d downloads, want 2", len(out.Runs))
	}
	// One handshake round trip: 2 x 20 ms + 300 kB at 20 Mbit/s.
	if limit := Limit(cfg.Profile, st.HandshakeRTTs(), 300e3).Seconds(); limit != 0.16 {
		t.Errorf("limit %v s, want 0.16", limit)
	}
	for _, rec := range out.Runs {
		// Below the limit, the bytes did not cross the emulated path.
		if rec.Seconds < rec.LimitS || rec.Seconds > 10 {
			t.Errorf("run %d: %.3f s, limit %.3f s", rec.Run, rec.Seconds, rec.LimitS)
		}
		// The handshake crossed the path too: at least one round trip.
		if hs := detailDuration(t, rec.Detail, "handshake"); hs < cfg.Profile.RTT() {
			t.Errorf("run %d: handshake %v in %q, shorter than the RTT", rec.Run, hs, rec.Detail)
		}
	}
}

// detailDuration reads key=DURATION from a run's detail.
func detailDuration(t *testing.T, detail, key string) time.Duration {
	t.Helper()
	for _, f := range strings.Fields(detail) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("detail %q: %v", detail, err)
			}
			return d
		}
	}
	t.Fatalf("detail %q has no %s", detail, key)
	return 0
}
