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
// (pmtud_blackhole.go) falls back to the starting size if the path stops
// carrying large packets.

const (
	// pmtuMaxProbes is MAX_PROBES (RFC 8899 section 5.1.2): lost probes
	// of one size before it is taken as too large for the path.
	pmtuMaxProbes = 3
	// pmtuMinStep ends the search when the largest size acknowledged
	// and the smallest that failed are closer than this: a few bytes
	// more per packet are not worth more probes.
	pmtuMinStep = 16
)

// pmtuPhase is where the search is (RFC 8899 section 5.2 names the
// states).
type pmtuPhase uint8

const (
	pmtuBase      pmtuPhase = iota // before the handshake is confirmed
	pmtuSearching                  // probing
	pmtuDone                       // search complete, disabled or after a black hole
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
	// the fallback after a black hole.
	base int
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

	hole blackHole
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
	// BlackHole: large packets stopped arriving and the size fell back
	// to the starting size; no more probes are sent.
	BlackHole bool
}

// validDatagramSize reports whether n is a valid max_udp_payload_size
// (RFC 9000 section 18.2).
func validDatagramSize(n int) bool {
	return n >= wire.MinMaxUDPPayloadSize && n <= wire.DefaultMaxUDPPayloadSize
}

// PacketAcked records the acknowledgement of the probe in flight, or of
// a packet black hole detection watches.
func (m *pmtuState) PacketAcked(p recovery.PacketInfo) {
	if p.Space != spaceApp {
		return
	}
	if p.PathProbe {
		if m.inFlight && p.Number == m.pn {
			m.outcome = probeAcked
		}
		return
	}
	m.hole.onAcked(p)
}

// PacketLost records the loss of the probe in flight, or of a packet
// black hole detection watches.
func (m *pmtuState) PacketLost(p recovery.PacketInfo) {
	if p.Space != spaceApp {
		return
	}
	if p.PathProbe {
		if m.inFlight && p.Number == m.pn {
			m.outcome = probeLost
		}
		return
	}
	m.hole.onLost(p)
}

// pmtuUpdate acts on what loss recovery reported since the last call:
// it starts the search once the handshake is confirmed (RFC 9000 section
// 14.3 probes with 1-RTT packets), raises the datagram size on an
// acknowledged probe, counts a lost one, and falls back after a black
// hole.
func (c *Conn) pmtuUpdate(now time.Duration) {
	m := &c.pmtu
	if m.phase == pmtuBase && c.handshakeConfirmed && c.hasPeer {
		c.pmtuStart(now)
	}
	if m.hole.detected() {
		c.pmtuFallBack()
		return
	}
	if !m.inFlight || m.outcome == probePending {
		return
	}
	m.inFlight = false
	if m.outcome == probeAcked {
		m.losses = 0
		m.low = m.size
		c.setMaxDatagram(m.size)
		m.hole.watch(m.base)
	} else {
		m.stats.ProbesLost++
		m.losses++
		// A single loss may be chance: the same size is tried again,
		// one round trip later (RFC 8899 section 5.1.2, PROBE_TIMER).
		m.next = now + c.sender.RTT().SmoothedRTT()
		if m.losses < pmtuMaxProbes {
			return
		}
		m.losses = 0
		m.high = m.size
	}
	c.pmtuNextSize()
}

// pmtuStart begins the search between the current size and the largest
// the configuration and the peer's max_udp_payload_size allow.
func (c *Conn) pmtuStart(now time.Duration) {
	m := &c.pmtu
	m.base, m.low = c.maxDatagram, c.maxDatagram
	limit := min(c.cfg.MaxProbeDatagramSize, int(min(c.peerParams.MaxUDPPayloadSize, wire.DefaultMaxUDPPayloadSize)))
	if c.cfg.DisablePathMTUDiscovery || limit <= m.low {
		m.phase = pmtuDone
		return
	}
	m.phase = pmtuSearching
	m.high = limit + 1
	m.size = limit
	m.next = now
}

// pmtuNextSize picks the size of the next probe, or ends the search.
func (c *Conn) pmtuNextSize() {
	m := &c.pmtu
	if m.high-m.low <= pmtuMinStep {
		m.phase = pmtuDone
		c.qlogMTUUpdated(c.maxDatagram, c.maxDatagram, true)
		return
	}
	m.size = (m.low + m.high) / 2
}

// setMaxDatagram makes size the largest datagram sent and tells loss
// recovery, whose window and pacer count in datagrams.
func (c *Conn) setMaxDatagram(size int) {
	old := c.maxDatagram
	c.maxDatagram = size
	if err := c.sender.SetMaxDatagramSize(size); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "path MTU: %v", err))
		return
	}
	c.qlogMTUUpdated(old, size, false)
}

// pmtuFallBack returns to the base size after a black hole and stops
// probing (RFC 8899 section 4.3: the path no longer carries the size in
// use).
func (c *Conn) pmtuFallBack() {
	m := &c.pmtu
	m.hole.stop()
	m.phase = pmtuDone
	m.inFlight = false
	m.stats.BlackHole = true
	c.setMaxDatagram(m.base)
}

// pmtuProbeDue reports whether a probe may be built now: the search runs,
// no probe is outstanding, its time has come, and congestion control and
// the pacer allow a packet of its size (a probe is an ordinary
// ack-eliciting packet for them). What is more urgent goes first, in the
// datagram before: PTO probes, a due ACK, HANDSHAKE_DONE and the
// acknowledgement of the client's Finished.
func (c *Conn) pmtuProbeDue(now time.Duration) bool {
	m := &c.pmtu
	if m.phase != pmtuSearching || m.inFlight || now < m.next || c.appWrite == nil {
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
	if c.sender.SendWindow() < m.size {
		return false
	}
	return c.sender.NextSendTime(now, m.size) <= now
}

// pmtuTimer is when the next probe may go, if only time holds it back;
// ok is false when no probe waits for a time in the future (congestion
// control or an outstanding probe wait for ACKs instead).
func (c *Conn) pmtuTimer() (time.Duration, bool) {
	m := &c.pmtu
	if m.phase != pmtuSearching || m.inFlight || c.sender.SendWindow() < m.size {
		return 0, false
	}
	t := max(m.next, c.sender.NextSendTime(c.now, m.size))
	return t, t > c.now
}

// probeDatagram builds a probe: one 1-RTT packet of a PING frame and
// PADDING up to the size under test (RFC 9000 section 14.4), which loss
// recovery learns is a probe. The PING is recorded as fkPathProbe, which
// nothing sends again when the probe is lost.
func (c *Conn) probeDatagram(now time.Duration, buf []byte) ([]byte, bool) {
	m := &c.pmtu
	w := &c.build.writer
	w.reset(buf, m.size)
	if !c.startPacket(w, spaceApp) {
		return nil, false
	}
	w.appendPing(fkPathProbe)
	p := w.finishPacket()
	w.padTo(m.size)
	out := c.sealDatagram(now, w)
	if out == nil {
		return nil, false
	}
	if err := c.sender.MarkPathProbe(spaceApp, p.pn); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "path MTU probe: %v", err))
		return nil, false
	}
	m.inFlight, m.pn, m.outcome = true, p.pn, probePending
	m.stats.ProbesSent++
	return out, true
}

// pmtuBudget caps a datagram that carries PTO probes at the base size
// once the size was raised: if the path became a black hole for large
// packets, the probes still get through, and their acknowledgement shows
// the large packets lost around them (pmtud_blackhole.go).
func (c *Conn) pmtuBudget(size int) int {
	if c.pmtu.hole.watching() && c.sender.ProbesPending(spaceApp) > 0 {
		return min(size, c.pmtu.base)
	}
	return size
}

// pathMTUStats reports the state of path MTU discovery.
func (c *Conn) pathMTUStats() PathMTUStats {
	s := c.pmtu.stats
	s.MaxDatagramSize = c.maxDatagram
	s.Searching = c.pmtu.phase == pmtuSearching
	return s
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
