package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Datagram Packetization Layer Path MTU Discovery (DPLPMTUD, RFC 8899
// section 5, RFC 9000 section 14.3). Every connection starts at
// Config.MaxDatagramSize, which any QUIC path carries. Once the handshake
// is confirmed, it sends probes: 1-RTT packets of PING and PADDING of the
// size under test (RFC 9000 section 14.4), one at a time. An acknowledged
// probe raises the datagram size; MAX_PROBES lost probes make a size the
// limit. The first probe tries the largest size (most paths carry it, and
// then one probe ends the search); after a failure, a binary search runs
// between the largest size acknowledged and the smallest that failed,
// until they are close. Loss recovery does not take a lost probe for
// congestion (recovery.MarkPathProbe). Black hole detection
// (pmtud_blackhole.go) suspects that the path stopped carrying large
// packets, a probe of the size in use confirms it (pmtud_confirm.go: a
// full receive buffer leaves the same trace), and the size falls back to
// the starting size; the search then starts again (RFC 8899
// section 5.2: PROBE_BASE, then SEARCHING), first at the size that was in
// use: a run of large packets lost while small ones arrived may be a
// queue that had room only for small ones, and a connection that kept the
// starting size for good could no longer carry what it was carrying (a
// tunnel's inner packets, sized for the path it found, all dropped).
// Such a queue may still be full when the first new probe goes: its
// retries wait at least pmtuHoleRetry. A search that ended below the
// largest size it could probe starts again after pmtuRaiseInterval (RFC
// 8899 section 5.1.1, PMTU_RAISE_TIMER), once the connection sends again:
// what was lost to a passing cause does not limit a long-lived connection
// (a tunnel runs for days) for good.

const (
	// pmtuMaxProbes is MAX_PROBES (RFC 8899 section 5.1.2): lost probes
	// of one size before it is taken as too large for the path.
	pmtuMaxProbes = 3
	// pmtuMinStep ends the search when the largest size acknowledged
	// and the smallest that failed are closer than this: a few bytes
	// more per packet are not worth more probes.
	pmtuMinStep = 16
	// pmtuHoleRetry is the least time between probes of one size after a
	// black hole: RFC 8899 section 5.1.1 puts PROBE_TIMER at 1 s or more;
	// a queue that had room only for small packets needs that to drain.
	pmtuHoleRetry = time.Second
	// pmtuRaiseInterval is PMTU_RAISE_TIMER (RFC 8899 section 5.1.1:
	// 600 s, as RFC 4821 recommends).
	pmtuRaiseInterval = 600 * time.Second
)

// pmtuPhase is where the search is (RFC 8899 section 5.2 names the
// states).
type pmtuPhase uint8

const (
	pmtuBase      pmtuPhase = iota // before the handshake is confirmed
	pmtuSearching                  // probing
	pmtuDone                       // search complete or disabled
)

// probeOutcome is what loss recovery said of the probe in flight.
type probeOutcome uint8

const (
	probePending probeOutcome = iota
	probeAcked
	probeLost
)

// pmtuState is the connection's path MTU discovery. It is the loss
// detector's PacketObserver: the Sender reports packets acknowledged and
// lost while it processes an ACK, and the connection acts on what was
// recorded before it builds the next datagram (pmtuUpdate).
type pmtuState struct {
	phase pmtuPhase
	// base is the starting size: what the path is known to carry, and
	// the fallback after a black hole; limit is the largest size the
	// search may probe.
	base, limit int
	// low is the largest size acknowledged; high the smallest size
	// known too large, or the maximum plus one.
	low, high int
	// size is the size of the probe in flight or of the next one, and
	// losses how many probes of that size were lost.
	size, losses int
	// inFlight: probe pn is outstanding; outcome is what became of it.
	inFlight bool
	pn       uint64
	outcome  probeOutcome
	// next is the earliest time of the next probe.
	next time.Duration
	// afterHole: the search after a black hole probes the size that was
	// in use, and lost probes of it are tried again no sooner than
	// pmtuHoleRetry.
	afterHole bool
	// raiseAt is when a search that ended below limit starts again (0:
	// it does not).
	raiseAt time.Duration

	hole blackHole
	// check confirms a black hole before the fallback
	// (pmtud_confirm.go).
	check holeCheck
	// stats are the counters Stats reports.
	stats PathMTUStats
}

// PathMTUStats describe path MTU discovery.
type PathMTUStats struct {
	// MaxDatagramSize is the largest UDP payload sent now.
	MaxDatagramSize int
	// ProbesSent and ProbesLost count path MTU probes.
	ProbesSent, ProbesLost uint64
	// Searching: probes are still being sent.
	Searching bool
	// BlackHole: large packets stopped arriving, a probe of the size in
	// use was lost too, and the size fell back to the starting size, from
	// which a new search started.
	BlackHole bool
	// BlackHolesDismissed counts black holes suspected and disproved: a
	// large packet got through before the fallback (pmtud_confirm.go).
	BlackHolesDismissed uint64
}

// validDatagramSize reports whether n is a valid max_udp_payload_size
// (RFC 9000 section 18.2).
func validDatagramSize(n int) bool {
	return n >= wire.MinMaxUDPPayloadSize && n <= wire.DefaultMaxUDPPayloadSize
}

// PacketAcked records the acknowledgement of a probe in flight, or of a
// packet black hole detection watches.
func (m *pmtuState) PacketAcked(p recovery.PacketInfo) {
	if p.Space != spaceApp {
		return
	}
	if p.PathProbe {
		if !m.checkProbe(p.Number, true) && m.inFlight && p.Number == m.pn {
			m.outcome = probeAcked
		}
		return
	}
	m.checkAcked(p)
	m.hole.onAcked(p)
}

// PacketLost records the loss of the probe in flight, or of a packet
// black hole detection watches.
func (m *pmtuState) PacketLost(p recovery.PacketInfo) {
	if p.Space != spaceApp {
		return
	}
	if p.PathProbe {
		if !m.checkProbe(p.Number, false) && m.inFlight && p.Number == m.pn {
			m.outcome = probeLost
		}
		return
	}
	m.hole.onLost(p)
}

// start begins the search, once the handshake is confirmed (RFC 9000
// section 14.3 probes with 1-RTT packets), between the current size cur
// and limit, the largest the configuration and the peer's
// max_udp_payload_size allow; disabled ends it at once.
func (m *pmtuState) start(now time.Duration, cur, limit int, disabled bool) {
	m.base, m.low, m.limit = cur, cur, limit
	if disabled || limit <= m.low {
		m.phase = pmtuDone
		return
	}
	m.search(now)
}

// search probes from the largest size down, starting at now.
func (m *pmtuState) search(now time.Duration) {
	m.phase = pmtuSearching
	m.high = m.limit + 1
	m.size = m.limit
	m.losses = 0
	m.next = now
}

// update acts at now on what loss recovery reported since the last call:
// an acknowledged probe raises the datagram size, a lost one is counted,
// and a black hole, once confirmed, sends the size back to the start.
// resize is the new datagram size (0: unchanged); done reports the end of
// the search. srtt spaces the probes of one size.
func (m *pmtuState) update(now, srtt time.Duration) (resize int, done bool) {
	if m.checkHole() {
		return m.fallBack(now, srtt), false
	}
	if m.phase == pmtuDone && m.raiseAt > 0 && now >= m.raiseAt {
		m.raiseAt = 0
		m.search(now)
		return 0, false
	}
	if !m.inFlight || m.outcome == probePending {
		return 0, false
	}
	m.inFlight = false
	if m.outcome == probeAcked {
		m.losses = 0
		m.low = m.size
		resize = m.size
		m.hole.watch(m.base)
	} else {
		m.stats.ProbesLost++
		m.losses++
		// A single loss may be chance: the same size is tried again,
		// one round trip later (RFC 8899 section 5.1.2, PROBE_TIMER).
		m.next = now + srtt
		if m.afterHole {
			m.next = now + max(srtt, pmtuHoleRetry)
		}
		if m.losses < pmtuMaxProbes {
			return 0, false
		}
		// The size that was in use is gone: the binary search below
		// it goes at the usual pace.
		m.losses, m.afterHole = 0, false
		m.high = m.size
	}
	return resize, m.nextSize(now)
}

// nextSize picks the size of the next probe, or ends the search at now;
// a search that found a size too large starts again pmtuRaiseInterval
// later.
func (m *pmtuState) nextSize(now time.Duration) (done bool) {
	if m.high-m.low <= pmtuMinStep {
		m.phase, m.afterHole = pmtuDone, false
		if m.high <= m.limit {
			m.raiseAt = now + pmtuRaiseInterval
		}
		return true
	}
	m.size = (m.low + m.high) / 2
	return false
}

// fallBack returns the base size after a black hole (RFC 8899 section
// 4.3: the path no longer carries the size in use) and searches again a
// round trip later, from the size that was in use: acknowledged, it comes
// back; lost MAX_PROBES times, the binary search below it finds what the
// path carries now.
func (m *pmtuState) fallBack(now, srtt time.Duration) int {
	m.hole.stop()
	m.check = holeCheck{}
	m.stats.BlackHole = true
	m.phase, m.inFlight, m.losses, m.afterHole, m.raiseAt = pmtuSearching, false, 0, true, 0
	m.size, m.low, m.next = m.low, m.base, now+srtt
	if m.size <= m.base {
		m.nextSize(now)
	}
	return m.base
}

// waiting reports whether a probe waits to go at now (nextProbe): a
// confirmation, or a probe of the search when none is outstanding and its
// time has come.
func (m *pmtuState) waiting(now time.Duration) bool {
	kind, _, at := m.nextProbe()
	return kind != probeNone && now >= at
}

// allowed reports whether congestion control and the pacer let the probe
// that waits go at now: it is an ordinary ack-eliciting packet for them.
func (m *pmtuState) allowed(now time.Duration, s *recovery.Sender) bool {
	_, size, _ := m.nextProbe()
	if s.SendWindow() < size {
		return false
	}
	return s.NextSendTime(now, size) <= now
}

// timer is when the next probe may go, if only time holds it back; ok is
// false when no probe waits for a time after now (congestion control or
// an outstanding probe wait for ACKs instead).
func (m *pmtuState) timer(now time.Duration, s *recovery.Sender) (time.Duration, bool) {
	kind, size, at := m.nextProbe()
	if kind == probeNone || s.SendWindow() < size {
		return 0, false
	}
	t := max(at, s.NextSendTime(now, size))
	return t, t > now
}

// onProbeSent records the probe that waited in flight as pn: a
// confirmation is followed by its witness.
func (m *pmtuState) onProbeSent(pn uint64) {
	if kind, _, _ := m.nextProbe(); kind == probeConfirm {
		m.check.phase, m.check.pn, m.check.witnessDue = checkSent, pn, true
	} else {
		m.inFlight, m.pn, m.outcome = true, pn, probePending
	}
	m.stats.ProbesSent++
}

// budget caps a datagram of size bytes that carries PTO probes at the
// base size once the size was raised: if the path became a black hole
// for large packets, the probes still get through, and their
// acknowledgement shows the large packets lost around them
// (pmtud_blackhole.go).
func (m *pmtuState) budget(size int, s *recovery.Sender) int {
	if m.hole.watching() && s.ProbesPending(spaceApp) > 0 {
		return min(size, m.base)
	}
	return size
}

// report describes path MTU discovery, cur being the datagram size now.
func (m *pmtuState) report(cur int) PathMTUStats {
	s := m.stats
	s.MaxDatagramSize = cur
	s.Searching = m.phase == pmtuSearching
	return s
}

// pmtuUpdate runs path MTU discovery at now, before a datagram is built:
// it starts once the handshake is confirmed and applies what the probes
// taught.
func (c *Conn) pmtuUpdate(now time.Duration) {
	if c.pmtu.phase == pmtuBase && c.handshakeConfirmed && c.hasPeer {
		limit := min(c.cfg.MaxProbeDatagramSize, int(min(c.peerParams.MaxUDPPayloadSize, wire.DefaultMaxUDPPayloadSize)))
		c.pmtu.start(now, c.maxDatagram, limit, c.cfg.DisablePathMTUDiscovery)
	}
	resize, done := c.pmtu.update(now, c.sender.RTT().SmoothedRTT())
	if resize > 0 {
		// Loss recovery's window and pacer count in datagrams.
		old := c.maxDatagram
		c.maxDatagram = resize
		if err := c.sender.SetMaxDatagramSize(resize); err != nil {
			c.closeLocal(transportError(wire.CodeInternalError, 0, "path MTU: %v", err))
		} else {
			c.qlog.mtuUpdated(now, old, resize, false)
		}
	}
	if done {
		c.qlog.mtuUpdated(now, c.maxDatagram, c.maxDatagram, true)
	}
}

// pmtuProbeDue reports whether a probe may be built now: one waits, and
// what is more urgent goes first, in the datagram before: PTO probes, a
// due ACK, HANDSHAKE_DONE and the acknowledgement of the client's
// Finished.
func (c *Conn) pmtuProbeDue(now time.Duration) bool {
	if !c.pmtu.waiting(now) || c.appWrite == nil {
		return false
	}
	if c.handshakeDonePend || c.hsDiscardPending || c.sender.ProbesPending(spaceApp) > 0 {
		return false
	}
	for s := range spaceApp + 1 {
		if c.canSendIn(s) && c.spaces[s].acks.due(now) {
			return false
		}
	}
	return c.pmtu.allowed(now, c.sender)
}

// probeDatagram builds the probe that waits: one 1-RTT packet of a PING
// frame and PADDING up to the size under test, or in use for a
// confirmation (RFC 9000 section 14.4), which loss recovery learns is a
// probe. The PING is recorded as fkPathProbe, which nothing sends again
// when the probe is lost. A confirmation's witness is built apart.
func (c *Conn) probeDatagram(now time.Duration, buf []byte) ([]byte, bool) {
	kind, size, _ := c.pmtu.nextProbe()
	if kind == probeWitness {
		return c.witnessDatagram(now, buf)
	}
	w := &c.scratch().writer
	w.reset(buf, size)
	if !c.startPacket(w, spaceApp) {
		return nil, false
	}
	w.appendPing(fkPathProbe)
	p := w.finishPacket()
	w.padTo(size)
	out := c.sealDatagram(now, w)
	if out == nil {
		return nil, false
	}
	if err := c.sender.MarkPathProbe(spaceApp, p.pn); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "path MTU probe: %v", err))
		return nil, false
	}
	c.pmtu.onProbeSent(p.pn)
	return out, true
}

// largestDatagram is the largest UDP payload either endpoint may send
// on the connection: what this one may probe up to and what it can
// receive. A FEC source symbol is at most that long.
func (c *Config) largestDatagram() int {
	return max(c.largestSend(), c.MaxReceiveDatagramSize)
}

// largestSend is the largest UDP payload this endpoint may send: its
// starting size, or what path MTU discovery may probe up to.
func (c *Config) largestSend() int {
	if c.DisablePathMTUDiscovery {
		return c.MaxDatagramSize
	}
	return max(c.MaxDatagramSize, c.MaxProbeDatagramSize)
}
