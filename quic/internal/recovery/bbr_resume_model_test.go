package recovery

import (
	"testing"
	"time"
)

func bbrResumeServerConfig() Config {
	cfg := resumeServerConfig()
	cfg.Algorithm = BBR
	cfg.BBR.Seed = 1
	return cfg
}

// A resumed BBR sender on the geo path (as TestModelResumeGEO) probes at
// half the saved rate from 652 ms, validates the jump a round trip after
// it ended and goes on in Startup from the probe rate, expecting the saved
// bandwidth (expectFullBw), so that Startup ends a round trip after it
// measured that rate: no packet is dropped, where the cold sender drops 12
// (38 when Startup counted its three round trips from the probe rate).
// Its first megabyte arrives 508 ms sooner than a cold sender's, and as
// its window grows from the probe once the ACKs of the Validating Phase
// show the path carrying it, 5 MiB 273 ms and 10 MiB 252 ms sooner (held
// at the probe until the end, it fell 14 ms behind the cold sender's
// first-flight jump, bbr_longrtt.go, by 5 MiB). The run is deterministic:
// the figures are those it gave when written.
func TestModelBBRResumeGEO(t *testing.T) {
	const rate = 50_000_000 / 8
	b, st := geoResumePath(rate)
	run := runResumeModel(t, bbrResumeServerConfig(), b, &st, 10*time.Second)
	cb, _ := geoResumePath(rate)
	cold := runResumeModel(t, bbrResumeServerConfig(), cb, nil, 10*time.Second)

	wantPhases(t, run,
		phaseChange{651920000, ResumeUnvalidated},
		phaseChange{1262378010, ResumeValidating},
		phaseChange{1912570010, ResumeNormal})
	if run.dropped != 0 || cold.dropped != 12 {
		t.Errorf("%d packets dropped resumed, %d cold; want 0 and 12", run.dropped, cold.dropped)
	}
	for _, tc := range []struct {
		mb            int64
		resumed, cold time.Duration
	}{{1, 1594234010, 2102832000}, {5, 2501424000, 2774064000}, {10, 3360896000, 3612912000}} {
		r, c := run.deliveredAt(tc.mb<<20), cold.deliveredAt(tc.mb<<20)
		if r != tc.resumed || c != tc.cold {
			t.Errorf("%d MiB delivered at %v resumed, %v cold; want %v and %v", tc.mb, r, c, tc.resumed, tc.cold)
		}
	}
}

// The bottleneck fell to a quarter of the saved rate (as
// TestModelResumeSafeRetreat): BBR's probe, at twice what the path now
// carries, builds a queue that the unvalidated packets' RTT samples show,
// and it enters Safe Retreat 332 ms after the first drop, before any loss
// is detected. 54 packets (64,800 bytes) are lost in 20 s, against 12 for
// a cold sender (CUBIC under Careful Resume: 681 and 331).
func TestModelBBRResumeSafeRetreat(t *testing.T) {
	const rate = 50_000_000 / 8 / 4
	b, st := geoResumePath(rate)
	run := runResumeModel(t, bbrResumeServerConfig(), b, &st, 20*time.Second)
	cb, _ := geoResumePath(rate)
	cold := runResumeModel(t, bbrResumeServerConfig(), cb, nil, 20*time.Second)

	wantPhases(t, run,
		phaseChange{657680000, ResumeUnvalidated},
		phaseChange{1260790400, ResumeValidating},
		phaseChange{1552672000, ResumeSafeRetreat},
		phaseChange{2561056000, ResumeNormal})
	retreat := run.entered(ResumeSafeRetreat)
	if run.firstDrop != 1220086400 || retreat-run.firstDrop > 650*ms {
		t.Errorf("first drop at %v, Safe Retreat at %v: want the drop at 1.2200864s and the retreat within a round trip", run.firstDrop, retreat)
	}
	if run.lostAtRetreat != 0 {
		t.Errorf("%d packets declared lost before Safe Retreat, want none", run.lostAtRetreat)
	}
	if run.dropped != 54 || cold.dropped != 12 {
		t.Errorf("%d packets dropped resumed, %d cold; want 54 and 12", run.dropped, cold.dropped)
	}
}
