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
// written here. Startup (from six initial windows, bbr_longrtt.go) ends at
// 3.6 s, and Drain and DOWN end on the same ACK, the queue being empty;
// ProbeBW then cycles every 6-7 s, its wait drawn in [2 s, 3 s) from DOWN's
// start; ProbeRTT comes 5 s after the last RTT sample at the minimum, and
// since pacing keeps a packet or two queued, no later sample matches the
// minimum measured in ProbeRTT: it recurs every 5 s plus its own 1.3 s
// (200 ms at half the BDP and a 600 ms round trip, after draining to it),
// which costs a tenth of the link. No packet is dropped.
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
		"3.601152s probe_bw_cruise",
		"5.600311758s probe_rtt",
		"6.49761891s probe_bw_cruise",
		"8.570526062s probe_bw_refill",
		"9.170768486s probe_bw_up",
		"11.433152971s probe_bw_down",
		"11.497664971s probe_rtt",
		"12.928256971s probe_bw_cruise",
		"15.817067153s probe_bw_refill",
		"16.417309578s probe_bw_up",
		"17.928398062s probe_rtt",
		"19.187726062s probe_bw_cruise",
		"22.076342305s probe_bw_refill",
		"22.676584729s probe_bw_up",
		"24.187865214s probe_rtt",
		"25.447193214s probe_bw_cruise",
		"28.159130669s probe_bw_refill",
		"28.759373093s probe_bw_up",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
	if u < 0.88 || run.dropped != 0 {
		t.Errorf("utilization %.3f from 10 s to 30 s, want >= 0.88; %d dropped", u, run.dropped)
	}
}
