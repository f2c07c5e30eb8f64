package core

// The receive path, stage 2 of 6: one packet's header. handlePacket parses
// it and sends the packet the way its type goes: Version Negotiation
// (version.go), Retry (retry.go), another version than the connection's
// (version.go), Initial, 0-RTT and Handshake (handleLong), or 1-RTT
// (handleShort). These check the connection IDs (RFC 9000 section 7.2)
// and that the keys to open the packet are there. A packet whose keys
// have not arrived yet is held, and tried again after the datagram.
//
// Next: receive_open.go, protection removal.

import (
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/wire"
)

// handlePacket processes the first packet of data and returns its length
// and whether it was processed.
func (c *Conn) handlePacket(now time.Duration, data []byte) (int, bool) {
	if !wire.IsLongHeader(data[0]) {
		c.rxPacketLen = len(data)
		return len(data), c.handleShort(now, data)
	}
	if c.isClient && isVersionNegotiation(data) {
		return len(data), c.onVersionNegotiation(now, data)
	}
	h, pnOffset, err := wire.ParseLongHeader(data)
	if err != nil {
		// Unparsable: the rest of the datagram cannot be split into
		// packets.
		return len(data), false
	}
	if h.Version != c.version {
		return c.handleOtherVersion(now, data, &h, pnOffset)
	}
	if h.Type == wire.PacketTypeRetry {
		return len(data), c.onRetry(now, data, &h)
	}
	size := pnOffset + int(h.Length)
	c.rxPacketLen = size
	return size, c.handleLong(now, data[:size], &h, pnOffset)
}

// handleLong processes an Initial, 0-RTT or Handshake packet. Its
// Destination Connection ID must be ours (a server also accepts the
// client's original one), and once the peer's first Initial was processed
// its Source must not change (RFC 9000 section 7.2). Its keys are its
// space's, or the 0-RTT keys a server has once it processed the
// ClientHello (RFC 9001 section 4.6).
func (c *Conn) handleLong(now time.Duration, pkt []byte, h *wire.LongHeader, pnOffset int) bool {
	if !c.cids.isLocalID(h.DstConnID) && (c.isClient || h.DstConnID != c.InitialDestConnID()) {
		return false
	}
	if c.peerSCIDSet && h.SrcConnID != c.cids.peerInitialSCID {
		return false
	}
	switch c.keysFor(h.Type) {
	case keysPending:
		return c.hold(now, pkt, h.Type) // RFC 9001 section 5.7
	case keysGone:
		return false
	}
	if !c.isClient && h.Type == wire.PacketTypeInitial && c.rxDatagramLen < minInitialDatagram {
		// RFC 9000 section 14.1: a server drops an Initial packet in a
		// datagram of less than 1200 bytes.
		return false
	}
	s, _ := spaceOfPacketType(h.Type)
	keys := c.spaces[s].read
	if h.Type == wire.PacketType0RTT {
		keys = c.early.read
	}
	return c.openLong(now, s, keys, pkt, h, pnOffset)
}

// handleShort processes a 1-RTT packet.
func (c *Conn) handleShort(now time.Duration, pkt []byte) bool {
	h, pnOffset, err := wire.ParseShortHeader(pkt, c.cfg.ConnIDLen)
	if err != nil || !c.cids.isLocalID(h.DstConnID) {
		return false
	}
	if c.keysFor(wire.PacketType1RTT) != keysReady {
		// RFC 9001 section 5.7: no 1-RTT processing before the keys
		// arrive, nor at a server before its handshake completes.
		return c.hold(now, pkt, wire.PacketType1RTT)
	}
	return c.openShort(now, pkt, pnOffset, h.DstConnID)
}

// Packets that arrive before the keys to open them (RFC 9001 section 5.7):
// a server's Handshake packets overtaking its Initial, a client's 1-RTT
// packets overtaking its Finished, 0-RTT packets ahead of the ClientHello
// that yields their keys. Dropping them would cost a retransmission, on a
// GEO path a whole second, so they are kept, up to a bound an attacker
// cannot exceed, and processed when the keys arrive. RFC 9000 section
// 13.2.1 lets them be acknowledged late.
const (
	maxUndecryptablePackets = 32
	maxUndecryptableBytes   = 64 << 10
)

// heldPacket is a copy of a packet waiting for its keys, its protection
// untouched.
type heldPacket struct {
	data []byte
	typ  wire.PacketType
	ecn  ecn.Codepoint // the codepoint of the datagram it came in
}

// undecryptableQueue holds packets waiting for keys, in arrival order.
type undecryptableQueue struct {
	pkts  []heldPacket
	bytes int
}

// hold keeps a copy of a packet whose keys are not there yet, and reports
// whether it was kept: the queue is bounded in packets and bytes.
func (c *Conn) hold(now time.Duration, pkt []byte, typ wire.PacketType) bool {
	q := &c.undecryptable
	if len(q.pkts) >= maxUndecryptablePackets || q.bytes+len(pkt) > maxUndecryptableBytes {
		return false
	}
	q.pkts = append(q.pkts, heldPacket{data: append([]byte(nil), pkt...), typ: typ, ecn: c.ecn.rx})
	q.bytes += len(pkt)
	c.stats.PacketsBuffered++
	if c.debugf != nil {
		c.debugf("%v held %v packet of %d bytes until its keys arrive", now, typ, len(pkt))
	}
	return true
}

// keysState says whether the keys of a packet type are there, may still
// come, or never will.
type keysState uint8

const (
	keysPending keysState = iota
	keysReady
	keysGone
)

// keysFor reports the state of the keys that open packets of type typ.
func (c *Conn) keysFor(typ wire.PacketType) keysState {
	switch typ {
	case wire.PacketTypeInitial, wire.PacketTypeHandshake:
		s, _ := spaceOfPacketType(typ)
		sp := c.spaces[s]
		switch {
		case sp.discarded:
			return keysGone
		case sp.read != nil:
			return keysReady
		}
	case wire.PacketType0RTT:
		switch {
		case c.isClient:
			return keysGone
		case c.early.read != nil:
			return keysReady
		case c.spaces[spaceHandshake].write != nil || c.handshakeComplete:
			// The ClientHello was processed without 0-RTT keys, or
			// they were discarded: 0-RTT packets stay unreadable.
			return keysGone
		}
	case wire.PacketType1RTT:
		// Section 5.7: no 1-RTT packet is processed before the
		// handshake completes at the server.
		if c.appRead != nil && (c.isClient || c.handshakeComplete) {
			return keysReady
		}
	default:
		return keysGone
	}
	return keysPending
}

// processHeld processes the held packets whose keys arrived, until none
// is left that can be opened: processing one may yield the keys of
// another. Those whose keys will never come are dropped.
func (c *Conn) processHeld(now time.Duration) {
	q := &c.undecryptable
	for progress := true; progress && len(q.pkts) > 0; {
		progress = false
		keep := q.pkts[:0]
		ready := make([]heldPacket, 0, len(q.pkts))
		for _, p := range q.pkts {
			switch c.keysFor(p.typ) {
			case keysReady:
				ready = append(ready, p)
			case keysPending:
				keep = append(keep, p)
			default:
				c.stats.PacketsDropped++
				q.bytes -= len(p.data)
			}
		}
		clear(q.pkts[len(keep):])
		q.pkts = keep
		for _, p := range ready {
			q.bytes -= len(p.data)
			if c.state != stateActive {
				continue
			}
			progress = true
			c.ecn.rx = p.ecn
			if _, ok := c.handlePacket(now, p.data); !ok {
				c.stats.PacketsDropped++
			}
		}
	}
	if c.state != stateActive || c.handshakeConfirmed {
		// Every key that will ever open a held packet is there.
		c.stats.PacketsDropped += uint64(len(q.pkts))
		*q = undecryptableQueue{}
	}
}
