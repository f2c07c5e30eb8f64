package core

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// TestQlogRecoveryEvents: the server's qlog of a 5 MB download over
// geo-lossy (1% loss each way), in virtual time, holds the recovery events
// qvis draws congestion graphs from, with the fields of
// draft-ietf-quic-qlog-quic-events: packet_lost with its header and
// trigger for every lost packet; congestion_state_updated chaining each
// old state to the last new one, entering recovery on a loss;
// metrics_updated carrying every metric at some point and, in each event,
// only the metrics that changed.
func TestQlogRecoveryEvents(t *testing.T) {
	ccfg, scfg := testConfigs(t, 61)
	var sq bytes.Buffer
	scfg.Qlog = &sq
	sp, _ := runDownload(t, profile(t, "geo-lossy"), 5_000_000, ccfg, scfg, 60*time.Second)
	_, evs := parseQlog(t, sq.Bytes())
	st := sp.server.conn.Stats()
	if st.PacketsLost == 0 {
		t.Fatal("nothing was lost: the test shows nothing")
	}

	triggers := map[string]uint64{}
	var lost uint64
	var states []map[string]any
	metrics := map[string]any{}
	for _, ev := range evs {
		switch ev.Name {
		case "recovery:packet_lost":
			lost++
			h, _ := ev.Data["header"].(map[string]any)
			if h["packet_type"] == nil || h["packet_number"] == nil {
				t.Errorf("packet_lost without its header: %v", ev.Data)
			}
			tr, _ := ev.Data["trigger"].(string)
			triggers[tr]++
		case "recovery:congestion_state_updated":
			states = append(states, ev.Data)
		case "recovery:metrics_updated":
			if len(ev.Data) == 0 {
				t.Errorf("metrics_updated at %v ms with no metric", ev.Time)
			}
			for k, v := range ev.Data {
				if old, ok := metrics[k]; ok && old == v {
					t.Errorf("metrics_updated at %v ms repeats %s = %v", ev.Time, k, v)
				}
				metrics[k] = v
			}
		}
	}
	if lost != st.PacketsLost {
		t.Errorf("%d packet_lost events, %d packets lost", lost, st.PacketsLost)
	}
	for tr, n := range triggers {
		if tr != "reordering_threshold" && tr != "time_threshold" {
			t.Errorf("%d losses with trigger %q", n, tr)
		}
	}
	if triggers["reordering_threshold"] == 0 || triggers["time_threshold"] == 0 {
		t.Errorf("losses by trigger %v, want both thresholds (the run is deterministic)", triggers)
	}
	for _, k := range []string{"min_rtt", "smoothed_rtt", "latest_rtt", "rtt_variance", "congestion_window",
		"bytes_in_flight", "ssthresh", "pacing_rate"} {
		if _, ok := metrics[k]; !ok {
			t.Errorf("no metrics_updated carries %s", k)
		}
	}

	if len(states) < 3 {
		t.Fatalf("%d congestion_state_updated events: %v", len(states), states)
	}
	if _, ok := states[0]["old"]; ok || states[0]["new"] != "slow_start" {
		t.Errorf("first congestion state %v, want new slow_start and no old", states[0])
	}
	lossRecovery := false
	for i := 1; i < len(states); i++ {
		s := states[i]
		if s["old"] != states[i-1]["new"] || s["old"] == s["new"] {
			t.Errorf("state change %d: %v after %v", i, s, states[i-1])
		}
		if s["new"] == "recovery" && s["trigger"] == "loss" {
			lossRecovery = true
		}
	}
	if !lossRecovery {
		t.Errorf("no entry into recovery triggered by a loss: %v", states)
	}
	t.Logf("%d losses %v, %d state changes, last %v", lost, triggers, len(states), states[len(states)-1])
}

// TestQlogCongestionStateECN: a download over a queue that marks CE and
// drops nothing logs its entries into recovery with the trigger ECN.
func TestQlogCongestionStateECN(t *testing.T) {
	ccfg, scfg := testConfigs(t, 20)
	var sq bytes.Buffer
	scfg.Qlog = &sq
	sp, _ := runECNDownload(t, ecnProfile(t, 12*1200, false), 4<<20, ccfg, scfg, nil)
	st := sp.server.conn.Stats()
	if st.Recovery.ECNCEIncreases == 0 || st.PacketsLost != 0 {
		t.Fatalf("%d CE signals, %d losses: want marks and no loss", st.Recovery.ECNCEIncreases, st.PacketsLost)
	}
	_, evs := parseQlog(t, sq.Bytes())
	byECN := 0
	for _, ev := range evs {
		if ev.Name != "recovery:congestion_state_updated" {
			continue
		}
		switch tr := ev.Data["trigger"]; {
		case tr == "ECN" && ev.Data["new"] == "recovery":
			byECN++
		case tr != nil:
			t.Errorf("state change %v triggered by other than ECN", ev.Data)
		}
	}
	if byECN == 0 {
		t.Error("no entry into recovery triggered by ECN")
	}
}

// The trigger of a congestion state change follows the signal a result
// brought, persistent congestion first; a packet the peer rebuilt signals
// only under a policy that counts it.
func TestQlogCongestionTrigger(t *testing.T) {
	s, err := recovery.New(recovery.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	q := newQlogger(io.Discard, 0)
	p := []recovery.PacketInfo{{Space: spaceApp, Number: 1}}
	for _, tc := range []struct {
		res        recovery.Result
		fecSignals bool
		want       string
	}{
		{recovery.Result{Lost: p, PersistentCongestion: true}, true, "persistent_congestion"},
		{recovery.Result{Lost: p}, true, "loss"},
		{recovery.Result{Recovered: p}, true, "fec_recovered"},
		{recovery.Result{Recovered: p}, false, ""},
		{recovery.Result{Acked: p}, true, ""},
	} {
		if got := q.congestionTrigger(&tc.res, s, tc.fecSignals); got != tc.want {
			t.Errorf("%+v (FEC signals %v): %q, want %q", tc.res, tc.fecSignals, got, tc.want)
		}
	}
}
