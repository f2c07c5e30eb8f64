package quicsim

import (
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// TestZeroRTTDownload: over geo (650 ms round trip), a small body comes
// one round trip after the start of a resumed connection that asks for it
// in 0-RTT, and two round trips after the start of a new one; a larger
// body is no later resumed than new; the same seed gives the same times.
func TestZeroRTTDownload(t *testing.T) {
	p, err := netsim.LookupProfile("geo")
	if err != nil {
		t.Fatal(err)
	}
	rtt := p.RTT()
	run := func(size int64, zeroRTT bool) time.Duration {
		t.Helper()
		r, err := Download(DownloadConfig{Profile: p.WithSeed(3), Seed: 3, Size: size, MaxDatagramSize: 1452, ZeroRTT: zeroRTT})
		if err != nil {
			t.Fatalf("size %d, 0-RTT %v: %v", size, zeroRTT, err)
		}
		if r.Bytes != size {
			t.Fatalf("size %d, 0-RTT %v: received %d bytes", size, zeroRTT, r.Bytes)
		}
		return r.Elapsed
	}
	const small = 4000
	cold, early := run(small, false), run(small, true)
	if early < rtt || early > rtt+10*time.Millisecond {
		t.Errorf("%d bytes in 0-RTT: %v, want one round trip (%v) and a few datagrams' serialization", small, early, rtt)
	}
	if cold < 2*rtt {
		t.Errorf("%d bytes on a new connection: %v, less than two round trips", small, cold)
	}
	if again := run(small, true); again != early {
		t.Errorf("same seed, %v then %v", early, again)
	}
	const large = 1_000_000
	if cold, early := run(large, false), run(large, true); early > cold {
		t.Errorf("%d bytes: %v resumed with 0-RTT, %v on a new connection", large, early, cold)
	}
}

// TestZeroRTTNotForRequests: Requests measures a single connection.
func TestZeroRTTNotForRequests(t *testing.T) {
	_, err := Requests(RequestsConfig{DownloadConfig: DownloadConfig{Profile: seedIFC(t, 1), ZeroRTT: true, Size: 10}, Requests: 1})
	if err == nil {
		t.Error("Requests with ZeroRTT did not fail")
	}
}

// TestCarefulResumeDownload: over geo, a returning client whose first
// connection downloaded three bandwidth-delay products (12.2 MB) returns
// the server's path state, about one product, in 0-RTT; the server
// resumes from it, jumps (Unvalidated) without Safe Retreat, and 1 MB
// arrives at 1.588 s instead of 2.099 s with 0-RTT alone (BBR, the
// default controller, probing at half the saved rate). Exact figures: the
// run is a function of its seed.
func TestCarefulResumeDownload(t *testing.T) {
	p, err := netsim.LookupProfile("geo")
	if err != nil {
		t.Fatal(err)
	}
	if got := WarmUpSize(p, 1_000_000, true); got != 12_187_500 {
		t.Fatalf("warm-up size %d, want 12187500", got)
	}
	run := func(resume bool) Result {
		t.Helper()
		r, err := Download(DownloadConfig{Profile: p.WithSeed(3), Seed: 3, Size: 1_000_000, MaxDatagramSize: 1452, ZeroRTT: true, CarefulResume: resume})
		if err != nil {
			t.Fatalf("Careful Resume %v: %v", resume, err)
		}
		return r
	}
	early, resumed := run(false), run(true)
	cr := resumed.CarefulResume
	t.Logf("0-RTT %v, with Careful Resume %v; %+v", early.Elapsed, resumed.Elapsed, cr)
	if early.CarefulResume.Negotiated || early.CarefulResume.PhaseChanges != 0 {
		t.Errorf("0-RTT alone used Careful Resume: %+v", early.CarefulResume)
	}
	bdp := int64(p.BDPBytes())
	if cr.BDPFramesAccepted != 1 || cr.Resumed.SavedCwnd < bdp*9/10 || cr.Resumed.SavedCwnd > bdp*11/10 ||
		resumed.ServerRecovery.ResumeUnvalidated != 1 || resumed.ServerRecovery.ResumeSafeRetreat != 0 {
		t.Errorf("Careful Resume %+v, recovery %+v", cr, resumed.ServerRecovery)
	}
	if early.Elapsed != 2099447360 || resumed.Elapsed != 1587882190 {
		t.Errorf("1 MB in %v with 0-RTT, %v with Careful Resume; want 2.09944736s and 1.58788219s", early.Elapsed, resumed.Elapsed)
	}
	if _, err := Download(DownloadConfig{Profile: p.WithSeed(3), Seed: 3, Size: 10, CarefulResume: true}); err == nil {
		t.Error("Careful Resume without ZeroRTT did not fail")
	}
}
