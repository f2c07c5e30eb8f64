package fec

import (
	"testing"
)

func newTestMonitor(t *testing.T, cfg MonitorConfig) *LossMonitor {
	t.Helper()
	m, err := NewLossMonitor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// arrive feeds sources and returns every report that fell due.
func arrive(m *LossMonitor, esis ...uint32) []Feedback {
	var out []Feedback
	for _, e := range esis {
		m.OnSource(e)
		if fb, ok := m.Report(); ok {
			out = append(out, fb)
		}
	}
	return out
}

func TestLossMonitorPeriodicReports(t *testing.T) {
	m := newTestMonitor(t, MonitorConfig{FeedbackPolicy: FeedbackPolicy{Interval: 10}})
	// ESIs 0..19 with 3, 4 and 12 lost; 4 is recovered before the first
	// report, 12 after the second.
	var got []Feedback
	got = append(got, arrive(m, 0, 1, 2, 5, 6)...)
	m.OnRecovered(4)
	got = append(got, arrive(m, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19)...)
	m.OnRecovered(12)
	want := []Feedback{
		{FirstESI: 0, Sources: 10, Lost: 2, Recovered: 1, Bursts: 1, MaxBurst: 2, Unrecovered: 1, OldestUnrecovered: 3},
		{FirstESI: 10, Sources: 10, Lost: 1, Bursts: 1, MaxBurst: 1, Unrecovered: 2, OldestUnrecovered: 3},
	}
	if len(got) != len(want) {
		t.Fatalf("reports %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("report %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if m.Missing() != 1 {
		t.Errorf("missing %d after recovering 12, want 1 (ESI 3)", m.Missing())
	}
	if m.Reports() != 2 {
		t.Errorf("Reports() = %d, want 2", m.Reports())
	}
}

func TestLossMonitorReportsWhenALossRunEnds(t *testing.T) {
	m := newTestMonitor(t, MonitorConfig{FeedbackPolicy: FeedbackPolicy{Interval: 100, OnLossRun: true}, FirstESI: 1000})
	got := arrive(m, 1000, 1001, 1005)
	want := Feedback{FirstESI: 1000, Sources: 6, Lost: 3, Bursts: 1, MaxBurst: 3, Unrecovered: 3, OldestUnrecovered: 1002, LossRun: true}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("reports %+v, want [%+v]", got, want)
	}
	if got := arrive(m, 1006, 1007); len(got) != 0 {
		t.Errorf("reports without a new loss: %+v", got)
	}
	// A recovery beyond the highest ESI seen: 1008 lost, 1009 recovered;
	// the run stays open until 1010 arrives.
	m.OnRecovered(1009)
	if fb, ok := m.Report(); ok {
		t.Errorf("report before the run ended: %+v", fb)
	}
	got = arrive(m, 1010)
	want = Feedback{FirstESI: 1006, Sources: 5, Lost: 2, Recovered: 1, Bursts: 1, MaxBurst: 2, Unrecovered: 4, OldestUnrecovered: 1002, LossRun: true}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("reports %+v, want [%+v]", got, want)
	}
}

func TestLossMonitorLossesAtTheStartAndReordering(t *testing.T) {
	m := newTestMonitor(t, MonitorConfig{FeedbackPolicy: FeedbackPolicy{Interval: 4}})
	got := arrive(m, 2, 3)
	if len(got) != 1 || got[0].Lost != 2 || got[0].FirstESI != 0 || got[0].Unrecovered != 2 {
		t.Fatalf("losses of ESIs 0 and 1 not reported: %+v", got)
	}
	// ESI 1 arrives late: no longer missing, not a recovery.
	m.OnSource(1)
	if m.Missing() != 1 {
		t.Errorf("missing %d after a late arrival, want 1", m.Missing())
	}
	got = arrive(m, 4, 5, 6, 7)
	if len(got) != 1 || got[0].Recovered != 0 || got[0].Lost != 0 || got[0].Unrecovered != 1 {
		t.Errorf("report after a late arrival: %+v", got)
	}
}

func TestLossMonitorHorizonAndWrap(t *testing.T) {
	m := newTestMonitor(t, MonitorConfig{FeedbackPolicy: FeedbackPolicy{Interval: 50, Horizon: 8}, FirstESI: 0xFFFFFFF0})
	// ESIs wrap from 0xFFFFFFFF to 0; 0xFFFFFFF2 and 0x00000003 are lost.
	esis := []uint32{0xFFFFFFF0, 0xFFFFFFF1}
	for e := uint32(0xFFFFFFF3); e != 3; e++ {
		esis = append(esis, e)
	}
	got := arrive(m, esis...)
	got = append(got, arrive(m, 4, 5, 6, 7, 8, 9)...)
	if len(got) != 0 {
		t.Fatalf("early report: %+v", got)
	}
	if m.Missing() != 1 {
		t.Errorf("missing %d: the loss 0xFFFFFFF2, 24 ESIs back, is beyond the horizon 8; want only ESI 3", m.Missing())
	}
	got = arrive(m, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33)
	if len(got) != 1 {
		t.Fatalf("reports %+v, want one after 50 ESIs", got)
	}
	want := Feedback{FirstESI: 0xFFFFFFF0, Sources: 50, Lost: 2, Bursts: 2, MaxBurst: 1}
	if got[0] != want {
		t.Errorf("report across the wrap %+v, want %+v", got[0], want)
	}
}

func TestLossMonitorRejectsBadConfig(t *testing.T) {
	for _, cfg := range []MonitorConfig{
		{FeedbackPolicy: FeedbackPolicy{Interval: -1}},
		{FeedbackPolicy: FeedbackPolicy{Horizon: -1}},
	} {
		if _, err := NewLossMonitor(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

func TestLossMonitorWithoutPolicyNeverReports(t *testing.T) {
	m := newTestMonitor(t, MonitorConfig{})
	if got := arrive(m, 0, 5, 9, 100); len(got) != 0 {
		t.Errorf("reports with no policy: %+v", got)
	}
}

// TestMonitorOldestMissing: the oldest lost ESI not yet recovered, as the
// losses are recovered out of order.
func TestMonitorOldestMissing(t *testing.T) {
	m, err := NewLossMonitor(MonitorConfig{FeedbackPolicy: FeedbackPolicy{Horizon: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.OldestMissing(); ok {
		t.Fatal("missing before any source")
	}
	for _, esi := range []uint32{0, 1, 3, 4, 6} {
		m.OnSource(esi)
	}
	if e, ok := m.OldestMissing(); !ok || e != 2 {
		t.Fatalf("oldest missing %d %v, want 2", e, ok)
	}
	m.OnRecovered(2)
	if e, ok := m.OldestMissing(); !ok || e != 5 {
		t.Fatalf("oldest missing %d %v after 2 was rebuilt, want 5", e, ok)
	}
	m.OnSource(5) // late
	if e, ok := m.OldestMissing(); ok {
		t.Fatalf("oldest missing %d after every loss arrived or was rebuilt, want none", e)
	}
	m.OnSource(200) // 7..199 lost: 101 and later are within 100 of the next ESI
	if e, ok := m.OldestMissing(); !ok || e != 101 {
		t.Errorf("oldest missing %d %v past the horizon, want 101", e, ok)
	}
}
