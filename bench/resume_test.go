package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// TestVirtualResume: in virtual time over geo, the 0-RTT stacks' limit
// counts one round trip and the cold stack's two; a small body comes in
// about one round trip resumed and two cold; the replay is exact. A small
// body leaves Careful Resume nothing to do: satquic-resume's server
// resumes from the state of its 12.2 MB first connection but has sent the
// body within its initial window before the path is confirmed.
func TestVirtualResume(t *testing.T) {
	p, err := netsim.LookupProfile("geo")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DownloadConfig{Profile: p, Sizes: []int64{5000}, Runs: 2, Seed: 3, Virtual: true}
	for _, n := range strings.Split(ResumeVirtualStacks, ",") {
		st, err := LookupStack(n)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Stacks = append(cfg.Stacks, st)
	}
	a, err := RunDownload(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := RunDownload(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rtt := p.RTT().Seconds()
	for i, r := range a.Runs {
		if r != b.Runs[i] {
			t.Errorf("the replay differs: %+v and %+v", r, b.Runs[i])
		}
		rtts := 2.0
		if r.Stack != "satquic-cold" {
			rtts = 1
		}
		if r.LimitS < rtts*rtt || r.LimitS > rtts*rtt+0.01 {
			t.Errorf("%s: limit %.3f s, want %v round trips and the body", r.Stack, r.LimitS, rtts)
		}
		if r.Seconds < r.LimitS || r.Seconds > r.LimitS+0.05 {
			t.Errorf("%s: %.3f s of 5 kB, limit %.3f s", r.Stack, r.Seconds, r.LimitS)
		}
		if r.Stack == "satquic-resume" && !strings.Contains(r.Detail, "cr_phase=reconnaissance") {
			t.Errorf("satquic-resume: %s", r.Detail)
		}
	}
}

// TestVirtualCarefulResume: over geo in virtual time, 1 MB resumed with
// Careful Resume from the state of the first connection comes at 1.658 s,
// against 2.088 s with 0-RTT alone, after a jump and no Safe Retreat.
func TestVirtualCarefulResume(t *testing.T) {
	p, err := netsim.LookupProfile("geo")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DownloadConfig{Profile: p, Sizes: []int64{1_000_000}, Runs: 1, Seed: 3, Virtual: true}
	for _, n := range []string{"satquic-0rtt", "satquic-resume"} {
		st, err := LookupStack(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := SetCongestionControl([]Stack{st}, "cubic"); err != nil {
			t.Fatal(err)
		}
		cfg.Stacks = append(cfg.Stacks, st)
	}
	res, err := RunDownload(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]RunRecord{}
	for _, r := range res.Runs {
		got[r.Stack] = r
		t.Logf("%s: %.6f s, %s", r.Stack, r.Seconds, r.Detail)
	}
	early, resumed := got["satquic-0rtt"], got["satquic-resume"]
	if early.Seconds != (2087834560*time.Nanosecond).Seconds() || resumed.Seconds != (1657583415*time.Nanosecond).Seconds() {
		t.Errorf("1 MB in %.9f s with 0-RTT, %.9f s with Careful Resume", early.Seconds, resumed.Seconds)
	}
	if !strings.Contains(resumed.Detail, "cr_unvalidated=1 cr_retreats=0") {
		t.Errorf("satquic-resume: %s", resumed.Detail)
	}
}

// TestResumeStacksNamed: the resume experiment's stacks are registered,
// with one handshake round trip for a new connection and none resumed.
func TestResumeStacksNamed(t *testing.T) {
	for _, n := range strings.Split(ResumeRealTimeStacks, ",") {
		st, err := LookupStack(n)
		if err != nil {
			t.Fatal(err)
		}
		if st.Name() != n {
			t.Errorf("stack %s calls itself %s", n, st.Name())
		}
		want := 1
		if strings.HasSuffix(n, "-0rtt") || n == "satquic-resume" {
			want = 0
		}
		if st.HandshakeRTTs() != want {
			t.Errorf("%s: %d handshake round trips, want %d", n, st.HandshakeRTTs(), want)
		}
	}
}
