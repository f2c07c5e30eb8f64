package recovery

import (
	"fmt"
	"testing"
	"time"
)

// bbrTimeline lists the BBR state changes of a model run.
func bbrTimeline(run *modelRun) []string {
	var out []string
	last := BBRNone
	for _, s := range run.samples {
		if s.bbr != last {
			out = append(out, fmt.Sprintf("%v %v", s.at, s.bbr))
			last = s.bbr
		}
	}
	return out
}

// BBR over a 50 Mbit/s x 600 ms path with a buffer of one BDP, in virtual
// time: the run is deterministic, and each phase change comes at the time
// written here. Startup (from six initial windows and the first flight's
// rate, and ended by two round trips that do not raise it, bbr_longrtt.go)
// overshoots the one-BDP buffer by 10 packets and ends at 2.4 s; ProbeBW
// then cycles every 6-7 s, its wait drawn in [2 s, 3 s) from DOWN's start;
// ProbeRTT comes 5 s after the last RTT sample at the minimum, and since
// pacing keeps a packet or two queued, no later sample matches the minimum
// measured in
// ProbeRTT: it recurs every 5 s plus its own 1.3 s (200 ms at half the BDP
// and a 600 ms round trip, after draining to it), which costs a tenth of
// the link.
func TestModelBBRGEOPath(t *testing.T) {
	b := geoPath()
	cfg := DefaultConfig()
	cfg.Algorithm = BBR
	cfg.BBR.Seed = 3
	run := runModel(t, cfg, b, 30*time.Second)
	got := bbrTimeline(run)
	for _, line := range got {
		t.Log(line)
	}
	u := run.utilization(b.rate, 10*time.Second, 30*time.Second)
	t.Logf("utilization 10-30 s %.3f; dropped %d", u, run.dropped)
	want := []string{
		"0s startup",
		"2.40096s drain",
		"3.322368s probe_bw_cruise",
		"5.60023331s probe_rtt",
		"6.497540461s probe_bw_cruise",
		"8.570447613s probe_bw_refill",
		"9.170690037s probe_bw_up",
		"11.433074522s probe_bw_down",
		"11.497586522s probe_rtt",
		"12.928178522s probe_bw_cruise",
		"15.816988704s probe_bw_refill",
		"16.417231129s probe_bw_up",
		"17.928319613s probe_rtt",
		"19.187647613s probe_bw_cruise",
		"22.076263856s probe_bw_refill",
		"22.67650628s probe_bw_up",
		"24.187786765s probe_rtt",
		"25.447114765s probe_bw_cruise",
		"28.15905222s probe_bw_refill",
		"28.759294644s probe_bw_up",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
	if u < 0.88 || run.dropped != 10 {
		t.Errorf("utilization %.3f from 10 s to 30 s, want >= 0.88; %d dropped, want 10", u, run.dropped)
	}
}
