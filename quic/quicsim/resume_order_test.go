package quicsim

import (
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// returningDownload runs one download of bench resume's satquic stacks
// (1452-byte datagrams, BBR, no FEC) over profile with the links of the
// experiment's first run of seed 1: a new connection (cold), a returning
// client in 0-RTT (early), or one that also returns its path state (resumed).
func returningDownload(t *testing.T, profile string, size int64, early, resumed bool) Result {
	t.Helper()
	p, err := netsim.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	seed := netsim.DeriveSeed(1, 1)
	r, err := Download(DownloadConfig{Profile: p.WithSeed(seed), Seed: seed, Size: size, MaxDatagramSize: 1452,
		ZeroRTT: early || resumed, CarefulResume: resumed})
	if err != nil {
		t.Fatalf("%s, %d bytes, 0-RTT %v, Careful Resume %v: %v", profile, size, early, resumed, err)
	}
	return r
}

// A returning client on geo-lossy (250 Mbit/s, 600 ms, 1% random loss
// each way, no FEC) finishes well before a new one. Before BBR judged the
// losses while resuming by its own 2% threshold, the first random loss of
// the 9.4 MB unvalidated flight started Safe Retreat, which went back to
// the initial window's model, where each further loss exceeded that
// threshold: 100 MB took 61.8 s resumed, 5.9 s cold (bench resume
// --virtual --profile geo-lossy --seed 1). Exact figures: the runs are a
// function of their seeds.
func TestCarefulResumeRandomLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("three 20 MB downloads over geo-lossy")
	}
	const size = 20_000_000
	cold := returningDownload(t, "geo-lossy", size, false, false)
	resumed := returningDownload(t, "geo-lossy", size, true, true)
	rec := resumed.ServerRecovery
	t.Logf("cold %v, resumed %v; %+v", cold.Elapsed, resumed.Elapsed, resumed.CarefulResume)
	if resumed.CarefulResume.Phase != recovery.ResumeNormal || rec.ResumeUnvalidated != 1 || rec.ResumeValidating != 1 ||
		rec.ResumeSafeRetreat != 0 {
		t.Errorf("Careful Resume %+v, recovery %+v: want a jump validated without Safe Retreat", resumed.CarefulResume, rec)
	}
	if rec.PacketsLost == 0 {
		t.Error("no packet lost over a path that loses 1%")
	}
	if cold.Elapsed != 3258156222 || resumed.Elapsed != 2798098112 {
		t.Errorf("20 MB in %v cold, %v resumed; want 3.258156222s and 2.798098112s", cold.Elapsed, resumed.Elapsed)
	}
}

// bench resume's stacks keep their order on geo, geo-lossy and seed-ifc:
// the returning client with Careful Resume finishes before the one with
// 0-RTT alone and before a new connection. 0-RTT alone gains little over
// a new connection on a long path: its 0.5-RTT flight is an initial
// window, and the long-RTT Startup (scaled window, first-flight
// measurement) begins with the first RTT sample, a round trip after the
// start as for a new connection. On geo-lossy it is even 28 ms behind,
// the same ramp with other packets lost (over 100 MB 420 ms behind: a
// packet lost twice held the client's reading, and so its first flow
// control update past its 64 MiB initial stream window, a round trip
// longer than in the new connection).
func TestCarefulResumeOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("nine downloads of up to 20 MB over satellite profiles")
	}
	for _, tc := range []struct {
		profile                string
		size                   int64
		cold, early, resumeFig time.Duration
	}{
		{"geo", 10_000_000, 3579356320, 3575056160, 3327229760},
		{"geo-lossy", 20_000_000, 3258156222, 3286260522, 2798098112},
		{"seed-ifc", 20_000_000, 3609885916, 3604198954, 3569596111},
	} {
		cold := returningDownload(t, tc.profile, tc.size, false, false).Elapsed
		early := returningDownload(t, tc.profile, tc.size, true, false).Elapsed
		resumed := returningDownload(t, tc.profile, tc.size, true, true).Elapsed
		if resumed >= early || resumed >= cold {
			t.Errorf("%s, %d bytes: %v resumed, %v in 0-RTT, %v cold: Careful Resume not first", tc.profile, tc.size, resumed, early, cold)
		}
		if cold != tc.cold || early != tc.early || resumed != tc.resumeFig {
			t.Errorf("%s, %d bytes: %v cold, %v in 0-RTT, %v resumed; want %v, %v and %v",
				tc.profile, tc.size, cold, early, resumed, tc.cold, tc.early, tc.resumeFig)
		}
	}
}
