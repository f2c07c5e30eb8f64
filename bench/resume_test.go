package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/satquic/satquic/netsim"
)

// TestVirtualResume: in virtual time over geo, the 0-RTT stack's limit
// counts one round trip and the cold stack's two; a small body comes in
// about one round trip resumed and two cold; the replay is exact.
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
		if r.Stack == "satquic-0rtt" {
			rtts = 1
		}
		if r.LimitS < rtts*rtt || r.LimitS > rtts*rtt+0.01 {
			t.Errorf("%s: limit %.3f s, want %v round trips and the body", r.Stack, r.LimitS, rtts)
		}
		if r.Seconds < r.LimitS || r.Seconds > r.LimitS+0.05 {
			t.Errorf("%s: %.3f s of 5 kB, limit %.3f s", r.Stack, r.Seconds, r.LimitS)
		}
	}
}

// TestResumeStacksNamed: the planned stack says why it cannot run, and
// the real-time stacks are registered.
func TestResumeStacksNamed(t *testing.T) {
	if _, err := LookupStack("satquic-resume"); err == nil || !strings.Contains(err.Error(), "Careful Resume") {
		t.Errorf("satquic-resume: %v", err)
	}
	for _, n := range strings.Split(ResumeRealTimeStacks, ",") {
		st, err := LookupStack(n)
		if err != nil {
			t.Fatal(err)
		}
		if st.Name() != n {
			t.Errorf("stack %s calls itself %s", n, st.Name())
		}
		want := 1
		if strings.HasSuffix(n, "-0rtt") {
			want = 0
		}
		if st.HandshakeRTTs() != want {
			t.Errorf("%s: %d handshake round trips, want %d", n, st.HandshakeRTTs(), want)
		}
	}
}
