package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// maxReasonLen bounds the reason phrase sent in CONNECTION_CLOSE, so that
// the frame fits a packet of the smallest size (RFC 9000 section 19.19).
const maxReasonLen = 512

func truncateReason(r string) string {
	if len(r) > maxReasonLen {
		return r[:maxReasonLen]
	}
	return r
}

// closingState is what a closing or draining connection keeps (RFC 9000
// section 10.2): when the state ends, and the datagram carrying our
// CONNECTION_CLOSE, sent again in answer to the peer's packets.
type closingState struct {
	deadline time.Duration
	packet   []byte
	pending  bool // packet should go out
	received int  // datagrams received while closing
	reply    int  // answer when received reaches it; doubles each time
	// sent: the CONNECTION_CLOSE went out once. The closing period runs
	// from then: Close has no clock, and the connection's last known time
	// may be long past if it was idle.
	sent bool
}

// Close closes the connection with an application error code and reason
// (CONNECTION_CLOSE of type 0x1d, RFC 9000 section 10.2). The connection
// enters the closing state; EventClosed follows.
func (c *Conn) Close(code uint64, reason string) {
	if c.state != stateActive {
		return
	}
	f := wire.ConnectionCloseFrame{IsApplicationError: true, ErrorCode: code, ReasonPhrase: truncateReason(reason)}
	c.enterClosing(f, &ConnError{Application: true, Code: code, Reason: reason})
}

// closeLocal closes the connection for a transport error this endpoint
// detected.
func (c *Conn) closeLocal(e *wire.TransportError) {
	if c.state != stateActive {
		return
	}
	f := wire.ConnectionCloseFrame{ErrorCode: e.Code, TriggerType: wire.FrameType(e.FrameType), ReasonPhrase: truncateReason(e.Reason)}
	c.enterClosing(f, &ConnError{Code: e.Code, FrameType: e.FrameType, Reason: e.Reason})
}

// enterClosing sends CONNECTION_CLOSE and starts the closing period of
// three PTOs (RFC 9000 section 10.2).
func (c *Conn) enterClosing(f wire.ConnectionCloseFrame, err error) {
	c.state = stateClosing
	c.closeErr = err
	c.closeFrame = f
	c.closing.deadline = c.now + 3*c.pto()
	c.closing.reply = 1
	c.closing.packet = c.buildClosePacket()
	c.closing.pending = c.closing.packet != nil
	c.events.push(Event{Kind: EventClosed, Err: err})
}

// onPeerClose enters the draining state after the peer's CONNECTION_CLOSE
// (RFC 9000 section 10.2.2): nothing more is sent.
func (c *Conn) onPeerClose(f *wire.ConnectionCloseFrame) {
	if c.state != stateActive {
		return
	}
	err := &ConnError{
		Application: f.IsApplicationError, Code: f.ErrorCode,
		FrameType: uint64(f.TriggerType), Reason: f.ReasonPhrase, Remote: true,
	}
	c.enterDraining(err)
}

func (c *Conn) enterDraining(err error) {
	c.state = stateDraining
	c.closeErr = err
	c.closing.deadline = c.now + 3*c.pto()
	c.events.push(Event{Kind: EventClosed, Err: err})
}

// closeSilently ends the connection without a packet: idle timeout,
// handshake timeout, stateless reset (RFC 9000 sections 10.1 and 10.3).
func (c *Conn) closeSilently(err error) {
	if c.state == stateClosed {
		return
	}
	wasActive := c.state == stateActive
	if wasActive {
		c.closeErr = err
		c.events.push(Event{Kind: EventClosed, Err: err})
	}
	c.setClosed()
}

// onStatelessReset handles a recognized Stateless Reset: the connection
// drains (RFC 9000 section 10.3.1).
func (c *Conn) onStatelessReset() {
	c.enterDraining(ErrStatelessReset)
}

// onDatagramWhileClosing answers the peer's packets with our
// CONNECTION_CLOSE, less and less often (RFC 9000 section 10.2.1).
func (c *Conn) onDatagramWhileClosing() {
	c.closing.received++
	if c.closing.received >= c.closing.reply && c.closing.packet != nil {
		c.closing.pending = true
		c.closing.reply *= 2
	}
}

// closingDatagram returns the CONNECTION_CLOSE datagram if it is due.
func (c *Conn) closingDatagram(buf []byte) ([]byte, bool) {
	if !c.closing.pending {
		return nil, false
	}
	c.closing.pending = false
	if !c.addrValidated && c.ampSent+uint64(len(c.closing.packet)) > 3*c.ampReceived {
		return nil, false
	}
	if !c.closing.sent {
		c.closing.sent = true
		c.closing.deadline = c.now + 3*c.pto()
	}
	c.ampSent += uint64(len(c.closing.packet))
	c.stats.DatagramsSent++
	c.stats.BytesSent += uint64(len(c.closing.packet))
	return append(buf[:0], c.closing.packet...), true
}

// buildClosePacket builds the datagram carrying CONNECTION_CLOSE in every
// space the peer may be able to read. In Initial and Handshake packets an
// application close becomes an APPLICATION_ERROR transport close without
// its reason, which must not leak before the handshake is confirmed (RFC
// 9000 section 10.2.3).
func (c *Conn) buildClosePacket() []byte {
	if len(c.cids.peer) == 0 {
		return nil
	}
	// A writer of its own: the connection's may hold a datagram being
	// built. The packets are not held to one datagram's size.
	var w packetWriter
	w.reset(nil, numSpaces*c.maxDatagram)
	for s := range recovery.Space(numSpaces) {
		if !c.canSendIn(s) || (s != spaceApp && c.handshakeConfirmed) {
			continue
		}
		f := c.closeFrame
		if s != spaceApp && f.IsApplicationError {
			f = wire.ConnectionCloseFrame{ErrorCode: wire.CodeApplicationError}
		}
		if !c.startPacket(&w, s) {
			continue
		}
		if !w.appendFrame(f.Len(), f.Append) {
			w.abandonPacket()
			continue
		}
		w.finishPacket()
		c.spaces[s].nextPN++
	}
	if w.empty() {
		return nil
	}
	w.padDatagram(c.isClient)
	out, err := w.seal(c.packetKeys)
	if err != nil {
		return nil
	}
	return out
}
