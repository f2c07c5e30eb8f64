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
// rate, bbr_longrtt.go) overshoots the one-BDP buffer by 31 packets and
// ends at 4.8 s; ProbeRTT interrupts Drain, and ProbeBW then cycles every
// 6-7 s, its wait drawn in [2 s, 3 s) from DOWN's start; ProbeRTT comes 5 s
// after the last RTT sample at the minimum, and since pacing keeps a
// packet or two queued, no later sample matches the minimum measured in
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
		"4.80096s drain",
		"5.600256s probe_rtt",
		"6.57984s probe_bw_cruise",
		"9.280141091s probe_bw_refill",
		"9.880383516s probe_bw_up",
		"11.580016s probe_rtt",
		"12.88408s probe_bw_cruise",
		"14.956987152s probe_bw_refill",
		"15.557229576s probe_bw_up",
		"17.819614061s probe_bw_down",
		"17.884126061s probe_rtt",
		"19.314718061s probe_bw_cruise",
		"22.203528243s probe_bw_refill",
		"22.803770668s probe_bw_up",
		"24.314859152s probe_rtt",
		"25.574187152s probe_bw_cruise",
		"28.462803395s probe_bw_refill",
		"29.063045819s probe_bw_up",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
	if u < 0.88 || run.dropped != 31 {
		t.Errorf("utilization %.3f from 10 s to 30 s, want >= 0.88; %d dropped, want 31", u, run.dropped)
	}
}
