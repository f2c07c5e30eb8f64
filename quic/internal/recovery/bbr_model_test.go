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
// then cycles every 5-7 s, its wait drawn in [2 s, 3 s) from DOWN's start.
// CRUISE's RTT samples lie within ProbeRTTSlack of the minimum and renew
// it; ProbeRTT comes only when a bandwidth probe's queue kept them above
// it for 5 s: twice in 30 s, where counting only samples below the
// minimum brought it every 6.3 s (5 s and its own 1.3 s: 200 ms at half
// the BDP and a round trip, after draining to it).
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
		"6.022827249s probe_bw_refill",
		"6.623069673s probe_bw_up",
		"8.885454158s probe_bw_down",
		"10.958478158s probe_bw_refill",
		"11.870094158s probe_bw_up",
		"12.271950158s probe_rtt",
		"13.570062158s probe_bw_cruise",
		"16.206363249s probe_bw_refill",
		"16.806605674s probe_bw_up",
		"19.068990158s probe_bw_down",
		"21.957822158s probe_bw_refill",
		"22.455486158s probe_rtt",
		"23.573310158s probe_bw_cruise",
		"26.461926401s probe_bw_refill",
		"27.062168825s probe_bw_up",
		"29.32455331s probe_bw_down",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
	if u < 0.93 || run.dropped != 10 {
		t.Errorf("utilization %.3f from 10 s to 30 s, want >= 0.93; %d dropped, want 10", u, run.dropped)
	}
}
