package core

import (
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/wire"
)

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
func (c *Conn) hold(pkt []byte, typ wire.PacketType) bool {
	q := &c.undecryptable
	if len(q.pkts) >= maxUndecryptablePackets || q.bytes+len(pkt) > maxUndecryptableBytes {
		return false
	}
	q.pkts = append(q.pkts, heldPacket{data: append([]byte(nil), pkt...), typ: typ, ecn: c.ecn.rx})
	q.bytes += len(pkt)
	c.stats.PacketsBuffered++
	if c.debugf != nil {
		c.debugf("%v held %v packet of %d bytes until its keys arrive", c.now, typ, len(pkt))
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
	case wire.PacketTypeHandshake:
		sp := c.spaces[spaceHandshake]
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
		case c.earlyRead != nil:
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
