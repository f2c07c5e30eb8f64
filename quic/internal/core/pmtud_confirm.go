package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// Confirmation of a black hole before the fallback (RFC 8899 section 4.3:
// a black hole may be confirmed "by sending a probe packet of the current
// PLPMTU size"). The detector (pmtud_blackhole.go) sees large packets lost
// around a small one that arrived; a receiver whose socket buffer is full
// drops by bytes and leaves the same trace, large packets dropped while
// small ones still fit. Falling back then costs a tunnel dearly: every
// full-size inner packet is answered with a Fragmentation Needed that its
// hosts keep for minutes. So a suspicion keeps the size and sends one
// probe of it, PING and PADDING marked as a path probe, then a small PING,
// the witness. The probe acknowledged, or any large packet sent after the
// run began (the detector's own rule for the end of a run), dismisses the
// suspicion and the detector starts over; the probe lost, the size falls
// back. In a real hole no large packet is acknowledged: a suspicion ends
// in the fallback, once, and the watch stops until a new search raises the
// size again, so the connection does not go back and forth.
//
// What a real hole costs: the witness goes right after the probe and
// arrives, and its acknowledgement shows the probe lost 9/8 of a round
// trip after it went (RFC 9002 section 6.1.2, the time threshold) instead
// of after a probe timeout. One probe is enough: the suspicion comes from
// the acknowledgement of a small packet sent after the first loss, so the
// receiver reads again, and the losses the same acknowledgement reveals
// halved the congestion window, so its queue drains while the probe goes.

// checkPhase is where the confirmation of a suspected black hole is.
type checkPhase uint8

const (
	checkIdle checkPhase = iota // nothing suspected
	checkDue                    // the probe waits to go
	checkSent                   // the probe is out
)

// probeKind is what a probe datagram carries.
type probeKind uint8

const (
	probeNone    probeKind = iota
	probeSearch            // a size under test
	probeConfirm           // the size in use, a black hole suspected
	probeWitness           // the small PING after the confirmation probe
)

// holeCheck is the confirmation of a suspected black hole.
type holeCheck struct {
	phase checkPhase
	// size is the size in use when the suspicion began, the probe's.
	size int
	// since is when the first large packet lost in the run was sent: a
	// large packet sent after it and acknowledged dismisses the suspicion.
	since time.Duration
	// pn is the probe's packet number once sent, outcome what became of
	// it, or probeAcked when a large packet got through.
	pn      uint64
	outcome probeOutcome
	// witnessDue: the probe went and the witness waits to go.
	witnessDue bool
}

// active reports whether a black hole is suspected.
func (k *holeCheck) active() bool { return k.phase != checkIdle }

// suspect starts the confirmation of the black hole the detector reports:
// the size in use stays, and a probe of it waits to go.
func (m *pmtuState) suspect() {
	m.check = holeCheck{phase: checkDue, size: m.low, since: m.hole.runStart}
}

// checkAcked notes a large packet acknowledged during a suspicion: sent
// after the run began, it shows large packets get through.
func (m *pmtuState) checkAcked(p recovery.PacketInfo) {
	if m.check.active() && p.Bytes > m.hole.above && p.TimeSent > m.check.since {
		m.check.outcome = probeAcked
	}
}

// checkProbe records what became of the confirmation probe pn, if it is
// one, and reports whether it was.
func (m *pmtuState) checkProbe(pn uint64, acked bool) bool {
	k := &m.check
	if k.phase != checkSent || pn != k.pn {
		return false
	}
	switch {
	case acked:
		k.outcome = probeAcked
	case k.outcome == probePending:
		k.outcome = probeLost
		m.stats.ProbesLost++
	}
	return true
}

// checkHole starts a confirmation when the detector reports a black hole,
// and acts on what one learned: the suspicion is dismissed, and the
// detector starts over, when large packets got through; confirmed reports
// the probe lost, the black hole real.
func (m *pmtuState) checkHole() (confirmed bool) {
	if !m.check.active() && m.hole.detected() {
		m.suspect()
	}
	switch m.check.outcome {
	case probeAcked:
		m.check = holeCheck{}
		m.hole.watch(m.base)
		m.stats.BlackHolesDismissed++
	case probeLost:
		return true
	}
	return false
}

// nextProbe is the probe that waits to go, its size and the earliest time
// it may go: a confirmation and its witness first; the search's probes
// wait while a suspicion lasts.
func (m *pmtuState) nextProbe() (kind probeKind, size int, at time.Duration) {
	switch {
	case m.check.phase == checkDue:
		return probeConfirm, m.check.size, 0
	case m.check.witnessDue:
		return probeWitness, m.base, 0
	case m.check.active():
		return probeNone, 0, 0
	case m.phase == pmtuSearching && !m.inFlight:
		return probeSearch, m.size, m.next
	}
	return probeNone, 0, 0
}

// witnessDatagram builds the witness: one 1-RTT packet of a PING frame,
// far below the base size, which arrives through a black hole and whose
// acknowledgement shows the confirmation probe sent before it lost.
func (c *Conn) witnessDatagram(now time.Duration, buf []byte) ([]byte, bool) {
	w := &c.scratch().writer
	w.reset(buf, c.pmtu.base)
	if !c.startPacket(w, spaceApp) {
		return nil, false
	}
	w.appendPing(fkPing)
	w.finishPacket()
	out := c.sealDatagram(now, w)
	if out == nil {
		return nil, false
	}
	c.pmtu.check.witnessDue = false
	return out, true
}
