package core

// frameKind names what a sent frame carried, so that the core can react
// when the packet holding it is acknowledged or lost (RFC 9000 section
// 13.3 lists what is retransmitted and how).
type frameKind uint8

const (
	fkAck frameKind = iota + 1
	fkPing
	fkCrypto
	fkStream
	fkResetStream
	fkStopSending
	fkMaxData
	fkMaxStreamData
	fkMaxStreamsBidi
	fkMaxStreamsUni
	fkDataBlocked
	fkStreamDataBlocked
	fkStreamsBlockedBidi
	fkStreamsBlockedUni
	fkNewConnID
	fkRetireConnID
	fkHandshakeDone
	fkPathResponse
	fkNewToken
	fkFECSourceID  // id: sequence number
	fkFECRepair    // id: first ESI, n: window
	fkFECRecovered // id: largest sequence number reported
	// fkPathProbe is the PING of a path MTU probe (pmtud.go): never sent
	// again when lost.
	fkPathProbe
	fkBDP // id: the blob's sequence number (bdp.go)
	// fkDatagram is a DATAGRAM frame (datagram_send.go), n its payload
	// length: never sent again when lost.
	fkDatagram
	// fkAckFrequency is an ACK_FREQUENCY frame (id: its sequence
	// number), fkImmediateAck an IMMEDIATE_ACK, never sent again
	// (ackfreq.go).
	fkAckFrequency
	fkImmediateAck
	// fkPathChallenge is a PATH_CHALLENGE (path_send.go): never sent
	// again, a new challenge follows a lost one.
	fkPathChallenge
)

// sentFrame is the record of one frame in a sent packet: enough to
// acknowledge it or to send its content again, without keeping its bytes.
type sentFrame struct {
	kind frameKind
	fin  bool
	// id is the stream ID, the connection ID sequence number, or the
	// Largest Acknowledged of an ACK frame.
	id uint64
	// off and n are the data range of CRYPTO and STREAM frames; n is the
	// limit of flow control frames.
	off, n uint64
}

// inlineFrames is how many frame records a sent packet keeps without a
// separate allocation: a data packet usually holds an ACK and a STREAM
// frame, sometimes a flow control frame too.
const inlineFrames = 3

// sentPacket is the record of a packet in flight. Its frames are in inline
// when they fit, in extra otherwise; extra keeps its capacity when the
// ring slot is reused, so that steady-state sending allocates nothing.
type sentPacket struct {
	inline   [inlineFrames]sentFrame
	extra    []sentFrame
	n        uint8 // frames in inline, when useExtra is false
	useExtra bool
	live     bool
	// ect: the packet went out ECT(0) (ecn.go).
	ect bool
}

// setFrames records a copy of frames.
func (p *sentPacket) setFrames(frames []sentFrame) {
	if len(frames) <= inlineFrames {
		p.n = uint8(copy(p.inline[:], frames))
		p.useExtra = false
		return
	}
	p.extra = append(p.extra[:0], frames...)
	p.useExtra = true
}

// frames returns the recorded frames; the slice aliases the record.
func (p *sentPacket) frames() []sentFrame {
	if p.useExtra {
		return p.extra
	}
	return p.inline[:p.n]
}

// sentLog keeps the frame records of the packets of one space that are
// neither acknowledged nor lost, indexed by packet number. The core sends
// packet numbers without gaps, so the log is a ring: the record of packet
// pn is at pn - base.
type sentLog struct {
	ring  []sentPacket
	head  int    // index of base in ring
	count int    // records from base
	base  uint64 // packet number of the oldest record
}

// push adds the record of packet pn, which must follow the last one, and
// returns it with no frames.
func (l *sentLog) push(pn uint64) *sentPacket {
	if l.count == 0 {
		l.base = pn
	}
	for pn >= l.base+uint64(l.count) {
		if l.count == len(l.ring) {
			l.grow()
		}
		p := &l.ring[(l.head+l.count)%len(l.ring)]
		p.n, p.useExtra, p.live, p.ect = 0, false, false, false
		l.count++
	}
	p := l.at(pn)
	p.live = true
	return p
}

func (l *sentLog) grow() {
	// A handshake space sends a few packets: its log starts small, and
	// the application space's doubles as it needs. Four records hold
	// what a server sends in the Initial and Handshake spaces of a
	// handshake with one certificate, and the 1-RTT packets of a
	// connection that carries one request: eight cost each connection
	// of a load generator 1.5 KiB more.
	n := max(2*len(l.ring), 4)
	ring := make([]sentPacket, n)
	for i := range l.count {
		ring[i] = l.ring[(l.head+i)%len(l.ring)]
	}
	// Keep the frame slices of the free slots for reuse.
	for i := l.count; i < len(l.ring); i++ {
		ring[i] = l.ring[(l.head+i)%len(l.ring)]
		ring[i].live = false
	}
	l.ring, l.head = ring, 0
}

// at returns the record of pn, or nil if it is not in the log.
func (l *sentLog) at(pn uint64) *sentPacket {
	if pn < l.base || pn >= l.base+uint64(l.count) {
		return nil
	}
	return &l.ring[(l.head+int(pn-l.base))%len(l.ring)]
}

// take returns the frames of pn and marks the record done, or nil if pn is
// not live. The slice aliases the ring: it is valid until the next push.
func (l *sentLog) take(pn uint64) []sentFrame {
	p := l.at(pn)
	if p == nil || !p.live {
		return nil
	}
	p.live = false
	return p.frames()
}

// compact drops finished records from the front.
func (l *sentLog) compact() {
	for l.count > 0 && !l.ring[l.head].live {
		l.head = (l.head + 1) % len(l.ring)
		l.base++
		l.count--
	}
}

// each calls f with the packet number and frames of every live record, from
// the oldest, until f returns false.
func (l *sentLog) each(f func(pn uint64, frames []sentFrame) bool) {
	for i := range l.count {
		p := &l.ring[(l.head+i)%len(l.ring)]
		if p.live && !f(l.base+uint64(i), p.frames()) {
			return
		}
	}
}
