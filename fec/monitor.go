package fec

import (
	"fmt"
	"sort"
)

// The loss monitor is the receiver half of the feedback loop (seed 002,
// section IV-A): it watches the source ESIs that arrive, marks the gaps in
// the sequence as lost, counts what the decoder recovers, and cuts the
// stream into reports. HIRT reports every n_f sources; an adaptive
// controller may also ask for a report as soon as a run of losses ends, and
// for the list of what is still missing, so that it can aim repairs at it
// one round trip after the loss instead of one interval after.
//
// ESIs are 32-bit and wrap; the monitor extends them to 64 bits around the
// highest ESI seen (as QUIC does for packet numbers, RFC 9000 appendix A),
// so an ESI more than 2^31 away from it is taken to be on the near side of
// the wrap.

// defaultMonitorHorizon is how far back a loss is tracked when the policy
// does not say: the largest window an RFC 8681 repair can name.
const defaultMonitorHorizon = controllerWindowLimit

// MonitorConfig configures a LossMonitor.
type MonitorConfig struct {
	// FeedbackPolicy is what the sender's controller asked for.
	FeedbackPolicy
	// FirstESI is the ESI of the first source the sender sends, so that
	// losses at the very start are seen as gaps.
	FirstESI uint32
}

// LossMonitor tracks received and recovered source ESIs and builds
// Feedback reports. Feed it with OnSource and OnRecovered, then call
// Report after each packet to learn whether a report is due.
type LossMonitor struct {
	policy  FeedbackPolicy
	horizon int64

	next       int64 // one past the highest ESI seen (received or recovered)
	start      int64 // first ESI of the current interval
	counts     Feedback
	openRun    int  // lost ESIs just before next whose run has not ended
	runEnded   bool // a loss run ended since the last report
	missing    []int64
	reportsOut int
}

// NewLossMonitor checks cfg and returns a monitor.
func NewLossMonitor(cfg MonitorConfig) (*LossMonitor, error) {
	if cfg.Interval < 0 {
		return nil, fmt.Errorf("loss monitor: interval %d is negative", cfg.Interval)
	}
	if cfg.Horizon < 0 {
		return nil, fmt.Errorf("loss monitor: horizon %d is negative", cfg.Horizon)
	}
	horizon := cfg.Horizon
	if horizon == 0 {
		horizon = defaultMonitorHorizon
	}
	first := int64(cfg.FirstESI)
	return &LossMonitor{policy: cfg.FeedbackPolicy, horizon: int64(horizon), next: first, start: first}, nil
}

// extend maps a 32-bit ESI to the 64-bit sequence nearest to m.next.
func (m *LossMonitor) extend(esi uint32) int64 {
	return m.next + int64(int32(esi-uint32(m.next)))
}

// OnSource records the arrival of source esi. A jump over ESIs marks them
// lost, and the arrival ends the loss run they belong to.
func (m *LossMonitor) OnSource(esi uint32) {
	e := m.extend(esi)
	if e < m.next {
		// A late (reordered) source: it is no longer missing, though it
		// stays counted as lost in the interval that saw the gap.
		m.removeMissing(e)
		return
	}
	m.markLost(m.next, e)
	if m.openRun > 0 {
		m.counts.Bursts++
		m.counts.MaxBurst = max(m.counts.MaxBurst, m.openRun)
		m.openRun = 0
		m.runEnded = true
	}
	m.next = e + 1
}

// OnRecovered records that the decoder rebuilt source esi. A recovered ESI
// beyond all seen ones was lost, and so were the ESIs before it; its run
// goes on until a source arrives.
func (m *LossMonitor) OnRecovered(esi uint32) {
	e := m.extend(esi)
	if e >= m.next {
		m.markLost(m.next, e+1)
		m.next = e + 1
		m.removeMissing(e)
		m.counts.Recovered++
		return
	}
	if m.removeMissing(e) && e >= m.start {
		m.counts.Recovered++
	}
}

// markLost records ESIs [from, to) as lost and missing.
func (m *LossMonitor) markLost(from, to int64) {
	if to <= from {
		return
	}
	n := to - from
	m.counts.Lost += int(n)
	m.openRun += int(n)
	// Only the last horizon ESIs can still be recovered.
	for e := max(from, to-m.horizon); e < to; e++ {
		m.missing = append(m.missing, e)
	}
}

// removeMissing deletes e from the missing list and reports whether it was
// there.
func (m *LossMonitor) removeMissing(e int64) bool {
	i := sort.Search(len(m.missing), func(i int) bool { return m.missing[i] >= e })
	if i == len(m.missing) || m.missing[i] != e {
		return false
	}
	m.missing = append(m.missing[:i], m.missing[i+1:]...)
	return true
}

// forgetOld drops missing ESIs that fell out of the horizon.
func (m *LossMonitor) forgetOld() {
	i := sort.Search(len(m.missing), func(i int) bool { return m.next-m.missing[i] <= m.horizon })
	if i > 0 {
		m.missing = append(m.missing[:0], m.missing[i:]...)
	}
}

// Missing returns how many lost ESIs within the horizon are still
// unrecovered.
func (m *LossMonitor) Missing() int {
	m.forgetOld()
	return len(m.missing)
}

// OldestMissing returns the oldest lost ESI within the horizon that is
// still unrecovered, and false when none is.
func (m *LossMonitor) OldestMissing() (uint32, bool) {
	m.forgetOld()
	if len(m.missing) == 0 {
		return 0, false
	}
	return uint32(m.missing[0]), true
}

// Reports returns how many reports the monitor has produced.
func (m *LossMonitor) Reports() int { return m.reportsOut }

// Report returns the report that is due, if any: at the end of each
// interval of Interval ESIs, and, with OnLossRun, as soon as a loss run
// has ended. The report covers the ESIs since the previous report.
func (m *LossMonitor) Report() (Feedback, bool) {
	sources := m.next - m.start
	periodic := m.policy.Interval > 0 && sources >= int64(m.policy.Interval)
	early := m.policy.OnLossRun && m.runEnded
	if sources <= 0 || !(periodic || early) {
		return Feedback{}, false
	}
	m.forgetOld()
	fb := m.counts
	fb.FirstESI = uint32(m.start)
	fb.Sources = int(sources)
	fb.Unrecovered = len(m.missing)
	if len(m.missing) > 0 {
		fb.OldestUnrecovered = uint32(m.missing[0])
	}
	fb.LossRun = early && !periodic
	m.counts = Feedback{}
	m.start = m.next
	m.runEnded = false
	m.reportsOut++
	return fb, true
}

// LastESI is the highest ESI the report covers: the receiver had seen
// everything up to it (received or lost) when it sent the report.
func (f Feedback) LastESI() uint32 { return f.FirstESI + uint32(f.Sources) - 1 }
