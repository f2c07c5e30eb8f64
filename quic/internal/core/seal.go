package core

import (
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// sealDatagram protects the packets w wrote and records them as sent at
// now. It returns nil when there is none, or when the datagram could not
// be encoded or protected (the connection is then closing).
func (c *Conn) sealDatagram(now time.Duration, w *packetWriter) []byte {
	if w.err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "building a datagram: %v", w.err))
		return nil
	}
	if w.empty() {
		return nil
	}
	pkts := w.packets()
	cp := c.ecn.codepoint(now, pkts)
	out, err := w.seal()
	if err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "%v", err))
		return nil
	}
	for i := range pkts {
		c.onPacketSent(now, w, &pkts[i], cp)
	}
	c.ecn.last = cp
	c.stats.DatagramsSent++
	c.stats.BytesSent += uint64(len(out))
	c.path.onSent(len(out))
	if !c.amp.validated {
		c.amp.onSent(len(out))
		c.updateAmplification(now)
	}
	return out
}

// onPacketSent records a sealed packet of w, sent with codepoint cp: its
// frames for acknowledgement and loss, the loss detector, and the ACK,
// ECN and idle state.
func (c *Conn) onPacketSent(now time.Duration, w *packetWriter, p *plannedPacket, cp ecn.Codepoint) {
	sp := c.spaces[p.space]
	sp.nextPN++
	frames := w.framesOf(p.space)
	size := p.size()
	rec := sp.sent.push(p.pn)
	rec.setFrames(frames)
	c.ecn.onSent(now, p.space, rec, cp)
	if c.debugf != nil {
		c.debugf("%v sent %v pn %d size %d frames %v", now, p.space, p.pn, size, frames)
	}
	c.qlog.packetSent(now, p, size, frames)
	inFlight := p.ackEliciting || p.padded
	err := c.sender.OnPacketSent(now, recovery.SentPacket{
		Space: p.space, Number: p.pn, Bytes: size,
		AckEliciting: p.ackEliciting, InFlight: inFlight, Ref: p.pn,
		Repair: p.space == spaceApp && carriesRepair(frames),
		Source: p.fecSource,
	})
	if err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "recording sent packet: %v", err))
		return
	}
	if p.hasAck {
		sp.acks.onAckSentAt(now)
	}
	if p.fecSource {
		// Sent while nothing else waits, a source ends a burst whose
		// tail needs repairs of its own.
		if err := c.fec.send.onPacketSent(p.pn, w.symbol, !c.hasAppData()); err != nil {
			c.closeLocal(transportError(wire.CodeInternalError, 0, "FEC source: %v", err))
		}
		c.fec.noteSourceContent(now, frames)
	}
	if p.ackEliciting {
		c.idle.onSendEliciting(now)
	}
	if p.space == spaceApp && !p.early {
		c.ku.onSent(p.pn)
		c.early.onOneRTTSent(p.pn)
	}
	c.stats.PacketsSent++
	if c.isClient && p.space == spaceHandshake {
		// RFC 9001 section 4.9.1: a client discards its Initial keys
		// when it first sends a Handshake packet.
		c.dropSpace(now, spaceInitial)
	}
}
