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
// overshoots the one-BDP buffer by 11 packets and ends at 2.4 s; ProbeBW
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
		"2.401344s drain",
		"3.323904s probe_bw_cruise",
		"6.024347928s probe_bw_refill",
		"6.624590352s probe_bw_up",
		"8.886974837s probe_bw_down",
		"10.959998837s probe_bw_refill",
		"11.871614837s probe_bw_up",
		"12.273470837s probe_rtt",
		"13.571582837s probe_bw_cruise",
		"16.207883928s probe_bw_refill",
		"16.808126353s probe_bw_up",
		"19.070510837s probe_bw_down",
		"21.959342837s probe_bw_refill",
		"22.457006837s probe_rtt",
		"23.574830837s probe_bw_cruise",
		"26.46344708s probe_bw_refill",
		"27.063689504s probe_bw_up",
		"29.326073989s probe_bw_down",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
	if u < 0.93 || run.dropped != 11 {
		t.Errorf("utilization %.3f from 10 s to 30 s, want >= 0.93; %d dropped, want 11", u, run.dropped)
	}
}
