package core

import (
	"bytes"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// probeOnce sends the probe m waits to send, as pn at now, and reports it
// acknowledged or lost.
func probeOnce(t *testing.T, m *pmtuState, now time.Duration, pn uint64, acked bool) (resize int, done bool) {
	t.Helper()
	if !m.waiting(now) {
		t.Fatalf("at %v no probe waits (phase %d, next %v)", now, m.phase, m.next)
	}
	m.onProbeSent(pn)
	info := recovery.PacketInfo{Space: spaceApp, Number: pn, PathProbe: true}
	if acked {
		m.PacketAcked(info)
	} else {
		m.PacketLost(info)
	}
	return m.update(now, 50*time.Millisecond)
}

// A search that found a size too large starts again after
// PMTU_RAISE_TIMER (RFC 8899 section 5.1.1), once the connection sends:
// the path may carry more by then. A search that reached the limit does
// not.
func TestPMTUStateRaiseTimer(t *testing.T) {
	const srtt = 50 * time.Millisecond
	var m pmtuState
	m.start(0, 1200, 1452, false)
	now, pn := time.Duration(0), uint64(1)
	fits := func(size int) bool { return size <= 1400 }
	for m.phase == pmtuSearching {
		now = max(now, m.next)
		probeOnce(t, &m, now, pn, fits(m.size))
		pn++
	}
	if m.low != 1389 {
		t.Fatalf("search ended at %d, want 1389", m.low)
	}
	end := now
	if m.update(end+pmtuRaiseInterval-time.Millisecond, srtt); m.waiting(end + pmtuRaiseInterval - time.Millisecond) {
		t.Fatal("probing again before the raise timer")
	}
	at := end + pmtuRaiseInterval
	m.update(at, srtt)
	if !m.waiting(at) || m.size != 1452 || !m.report(1389).Searching {
		t.Fatalf("at the raise timer: waiting %v, size %d, want a probe of the largest size", m.waiting(at), m.size)
	}
	// The path carries the largest size now.
	if resize, done := probeOnce(t, &m, at, pn, true); resize != 1452 || !done {
		t.Fatalf("probe of 1452 acknowledged: resize %d, done %v", resize, done)
	}
	if m.raiseAt != 0 {
		t.Errorf("raise timer set at %v after a search that reached the limit", m.raiseAt)
	}
	if m.update(at+2*pmtuRaiseInterval, srtt); m.waiting(at + 2*pmtuRaiseInterval) {
		t.Error("a search that reached the limit started again")
	}
}

// blackHoleAt feeds m a black hole at around now: large packets lost
// around a small one that arrived.
func blackHoleAt(m *pmtuState, now time.Duration) {
	at := func(i int) time.Duration { return now + time.Duration(i)*time.Millisecond }
	m.PacketLost(pktInfo{100, 1452, at(1), true}.info())
	m.PacketLost(pktInfo{101, 1452, at(2), true}.info())
	m.PacketAcked(pktInfo{102, 300, at(3), true}.info())
	for i := range 3 {
		m.PacketLost(pktInfo{uint64(103 + i), 1452, at(4 + i), true}.info())
	}
}

// After a black hole the size that was in use is probed one round trip
// later, and a lost probe is tried again no sooner than pmtuHoleRetry: a
// queue that had room only for small packets may still be full.
func TestPMTUStateRetryAfterHole(t *testing.T) {
	const srtt = 50 * time.Millisecond
	var m pmtuState
	m.start(0, 1200, 1452, false)
	if resize, _ := probeOnce(t, &m, 0, 1, true); resize != 1452 {
		t.Fatalf("resize %d", resize)
	}
	now := time.Second
	blackHoleAt(&m, now)
	if resize, _ := m.update(now, srtt); resize != 0 {
		t.Fatalf("suspected black hole: resize %d, want the size kept", resize)
	}
	// The confirmation (pmtud_confirm.go) is lost.
	if resize, _ := probeOnce(t, &m, now, 2, false); resize != 1200 {
		t.Fatalf("black hole: resize %d, want the base 1200", resize)
	}
	now += srtt
	if resize, done := probeOnce(t, &m, now, 3, false); resize != 0 || done {
		t.Fatalf("lost probe: resize %d, done %v", resize, done)
	}
	if m.waiting(now+pmtuHoleRetry-time.Millisecond) || !m.waiting(now+pmtuHoleRetry) || m.size != 1452 {
		t.Fatalf("after a lost probe: next probe at %v of %d bytes, want %v later and 1452", m.next, m.size, pmtuHoleRetry)
	}
	now += pmtuHoleRetry
	if resize, done := probeOnce(t, &m, now, 4, true); resize != 1452 || !done {
		t.Fatalf("acknowledged probe: resize %d, done %v, want 1452", resize, done)
	}
	// Lost probes of the next search are tried again a round trip later.
	if m.afterHole {
		t.Error("still waiting long after the size came back")
	}
}

// TestPMTUBlackHoleOverload: large datagrams stop arriving for a while and
// the client falls back to the base size; they keep being lost for a
// quarter of a second more (a queue with room only for small packets),
// then arrive again. The size comes back: the probes of the new search
// wait for the queue. Their quick retries used to end the search at the
// base size, where a tunnel drops every full-size inner packet.
func TestPMTUBlackHoleOverload(t *testing.T) {
	p, id, data, dropped := blackHoleTransfer(t, 400<<10)
	p.mustRun(func() bool { return p.client.Stats().PathMTU.BlackHole }, p.now+10*time.Second)
	until := p.now + 250*time.Millisecond // the overload goes on
	p.mustRun(func() bool { return p.now >= until }, until+time.Second)
	p.drop = nil
	var got []byte
	read := false
	err := p.run(func() bool {
		read = read || (p.server.streams.m[id] != nil && readAll(t, p.now, p.server, id, &got))
		return read && p.pmtuSettled()
	}, p.now+60*time.Second)
	st := p.client.Stats().PathMTU
	if err != nil {
		t.Fatalf("at %v: %v; client %+v, server pmtu %+v; server read %d bytes", p.now, err, st, p.server.pmtu, len(got))
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("server read %d bytes, want %d", len(got), len(data))
	}
	t.Logf("%d datagrams dropped; client %+v", *dropped, st)
	if st.MaxDatagramSize != DefaultMaxProbeDatagramSize || st.Searching {
		t.Errorf("client %+v, want %d found again", st, DefaultMaxProbeDatagramSize)
	}
}
