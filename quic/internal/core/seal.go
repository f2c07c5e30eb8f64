package core

import (
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// sealDatagram writes and protects the planned packets into buf[:0] and
// records them as sent. It returns nil if protection failed (the
// connection is then closing).
func (c *Conn) sealDatagram(now time.Duration, n, total int, buf []byte, size int) []byte {
	need := total + n*crypto.TagLen
	if cap(buf) < need {
		buf = make([]byte, 0, max(need, size+64))
	}
	out := buf[:0]
	cp := c.ecn.codepoint(now, c.build.plan[:n])
	for i := range n {
		p := &c.build.plan[i]
		var err error
		out, err = c.sealPacket(out, p)
		if err != nil {
			c.closeLocal(transportError(wire.CodeInternalError, 0, "sealing a %v packet: %v", p.space, err))
			return nil
		}
	}
	for i := range n {
		c.onPacketSent(now, &c.build.plan[i], cp)
	}
	c.ecn.last = cp
	c.stats.DatagramsSent++
	c.stats.BytesSent += uint64(len(out))
	if !c.amp.validated {
		c.amp.onSent(len(out))
		c.updateAmplification()
	}
	return out
}

// sealPacket appends the header and payload of p to out and protects them
// (RFC 9001 section 5).
func (c *Conn) sealPacket(out []byte, p *plannedPacket) ([]byte, error) {
	payload := c.build.payload[p.space]
	start := len(out)
	var err error
	if p.space == spaceApp && !p.early {
		h := wire.ShortHeader{DstConnID: c.cids.dcid(), PacketNumber: p.pn, PacketNumberLen: p.pnLen}
		out, err = wire.AppendShortHeader(out, &h)
	} else {
		pt := packetTypeOfSpace(p.space)
		if p.early {
			pt = wire.PacketType0RTT
		}
		h := wire.LongHeader{
			Type:            pt,
			Version:         c.version,
			DstConnID:       c.cids.dcid(),
			SrcConnID:       c.cids.local[0].id,
			Length:          uint64(p.pnLen + len(payload) + crypto.TagLen),
			LengthLen:       lengthFieldLen,
			PacketNumber:    p.pn,
			PacketNumberLen: p.pnLen,
		}
		if p.space == spaceInitial {
			h.Token = c.retry.token // a server's is empty
		}
		out, err = wire.AppendLongHeader(out, &h)
	}
	if err != nil {
		return out[:start], err
	}
	pnOffset := len(out) - start - p.pnLen
	out = append(out, payload...)
	var sealed []byte
	switch {
	case p.early:
		sealed, err = c.early.write.Protect(out[start:], pnOffset, p.pn)
	case p.space == spaceApp:
		sealed, err = c.appWrite.Protect(out[start:], pnOffset, p.pn)
	default:
		sealed, err = c.spaces[p.space].write.Protect(out[start:], pnOffset, p.pn)
	}
	if err != nil {
		return out[:start], err
	}
	return append(out[:start], sealed...), nil
}

// onPacketSent records a sealed packet, sent with codepoint cp: its frames
// for acknowledgement and loss, the loss detector, and the ACK, ECN and
// idle state.
func (c *Conn) onPacketSent(now time.Duration, p *plannedPacket, cp ecn.Codepoint) {
	sp := c.spaces[p.space]
	sp.nextPN++
	frames := c.build.frames[p.space]
	size := p.size(len(c.build.payload[p.space]))
	rec := sp.sent.push(p.pn)
	rec.setFrames(frames)
	c.ecn.onSent(now, p.space, rec, cp)
	if c.debugf != nil {
		c.debugf("%v sent %v pn %d size %d frames %v", now, p.space, p.pn, size, frames)
	}
	c.qlogPacketSent(now, p, size, frames)
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
		sp.acks.onAckSent()
	}
	if p.fecSource {
		c.onFECSourceSent(p.pn, c.build.payload[p.space])
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
