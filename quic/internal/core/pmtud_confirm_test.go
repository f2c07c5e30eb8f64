package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// raisedState is a path MTU search that settled at 1452 from 1200, its
// probe acknowledged at now, so that black hole detection watches.
func raisedState(t *testing.T, now time.Duration) *pmtuState {
	t.Helper()
	m := new(pmtuState)
	m.start(now, 1200, 1452, false)
	if resize, done := probeOnce(t, m, now, 1, true); resize != 1452 || !done {
		t.Fatalf("resize %d, done %v", resize, done)
	}
	return m
}

// sendConfirmation sends the confirmation probe that waits at now as pn,
// then its witness, checking both.
func sendConfirmation(t *testing.T, m *pmtuState, now time.Duration, pn uint64) {
	t.Helper()
	kind, size, _ := m.nextProbe()
	if !m.waiting(now) || kind != probeConfirm || size != 1452 {
		t.Fatalf("waiting %v, probe kind %d of %d bytes, want a confirmation of 1452", m.waiting(now), kind, size)
	}
	m.onProbeSent(pn)
	if kind, size, _ := m.nextProbe(); kind != probeWitness || size != 1200 {
		t.Fatalf("after the probe: kind %d of %d bytes, want the witness", kind, size)
	}
	m.check.witnessDue = false // witnessDatagram sent it
	if m.waiting(now + time.Hour) {
		t.Fatal("a probe waits while the confirmation is out")
	}
}

// A suspected black hole keeps the size and sends a probe of it with a
// witness behind; the probe acknowledged dismisses the suspicion, and the
// detector starts over.
func TestPMTUStateConfirmDismissed(t *testing.T) {
	const srtt = 50 * time.Millisecond
	now := time.Second
	m := raisedState(t, now)
	blackHoleAt(m, now)
	if resize, done := m.update(now, srtt); resize != 0 || done {
		t.Fatalf("suspicion: resize %d, done %v, want the size kept", resize, done)
	}
	sendConfirmation(t, m, now, 200)
	m.PacketAcked(probeInfo(200, now))
	if resize, _ := m.update(now+srtt, srtt); resize != 0 {
		t.Fatalf("probe acknowledged: resize %d", resize)
	}
	st := m.report(1452)
	if st.BlackHole || st.BlackHolesDismissed != 1 || st.ProbesSent != 2 || st.ProbesLost != 0 || st.Searching {
		t.Errorf("stats %+v, want one suspicion dismissed", st)
	}
	if m.check.active() || m.hole.run != 0 || !m.hole.watching() {
		t.Errorf("after the dismissal: check %+v, detector %+v, want a fresh watch", m.check, m.hole)
	}
	// A new run is a new suspicion.
	blackHoleAt(m, 2*time.Second)
	m.update(2*time.Second, srtt)
	if kind, _, _ := m.nextProbe(); kind != probeConfirm {
		t.Errorf("second run: probe kind %d, want a confirmation", kind)
	}
}

// A large packet sent after the run began and acknowledged before the
// probe goes ends the suspicion without a probe; one sent before the run
// does not.
func TestPMTUStateConfirmLargeAcked(t *testing.T) {
	const srtt = 50 * time.Millisecond
	now := time.Second
	m := raisedState(t, now)
	blackHoleAt(m, now) // the run starts with a packet sent at now+1ms
	m.update(now, srtt)
	m.PacketAcked(pktInfo{90, 1452, now, true}.info())
	if m.update(now, srtt); !m.check.active() {
		t.Fatal("a large packet sent before the run dismissed the suspicion")
	}
	m.PacketAcked(pktInfo{110, 1452, now + 10*time.Millisecond, true}.info())
	if resize, _ := m.update(now+srtt, srtt); resize != 0 || m.check.active() || m.waiting(now+srtt) {
		t.Fatalf("resize %d, check %+v, want the suspicion dismissed and no probe", resize, m.check)
	}
	if st := m.report(1452); st.BlackHolesDismissed != 1 || st.ProbesSent != 1 {
		t.Errorf("stats %+v", st)
	}
}

// The probe lost confirms the black hole: the size falls back, once, the
// detector stops, and the new search probes the size that was in use.
func TestPMTUStateConfirmLost(t *testing.T) {
	const srtt = 50 * time.Millisecond
	now := time.Second
	m := raisedState(t, now)
	blackHoleAt(m, now)
	m.update(now, srtt)
	sendConfirmation(t, m, now, 200)
	// More large packets lost meanwhile change nothing.
	m.PacketLost(pktInfo{201, 1452, now + 20*time.Millisecond, true}.info())
	if resize, _ := m.update(now+srtt, srtt); resize != 0 {
		t.Fatalf("resize %d before the probe's fate is known", resize)
	}
	now += 2 * srtt
	m.PacketLost(probeInfo(200, now-2*srtt))
	if resize, done := m.update(now, srtt); resize != 1200 || done {
		t.Fatalf("probe lost: resize %d, done %v, want the base 1200", resize, done)
	}
	st := m.report(1200)
	if !st.BlackHole || st.BlackHolesDismissed != 0 || st.ProbesSent != 2 || st.ProbesLost != 1 || !st.Searching {
		t.Errorf("stats %+v, want the black hole confirmed", st)
	}
	// Losses go on in the hole: no new suspicion while the size is the
	// base.
	blackHoleAt(m, now)
	if resize, _ := m.update(now, srtt); resize != 0 || m.check.active() {
		t.Fatalf("after the fallback: resize %d, check %+v", resize, m.check)
	}
	if kind, size, at := m.nextProbe(); kind != probeSearch || size != 1452 || at != now+srtt {
		t.Errorf("next probe kind %d of %d at %v, want the search's 1452 at %v", kind, size, at, now+srtt)
	}
}

// probeInfo is path probe pn of 1452 bytes sent at, as loss recovery
// reports it.
func probeInfo(pn uint64, at time.Duration) recovery.PacketInfo {
	p := pktInfo{pn, 1452, at, true}.info()
	p.PathProbe = true
	return p
}
