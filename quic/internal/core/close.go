package core

import (
	"sync"
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

// closingState is the end of a connection (RFC 9000 section 10.2): why it
// closed, and for a closing or draining connection when that period ends
// and the datagram carrying our CONNECTION_CLOSE, sent again in answer to
// the peer's packets.
//
// Close starts the period of three PTOs at its now. A protocol violation
// or a peer's close surfaces deep inside the processing of a datagram,
// where no time is at hand: the period then starts at the first time the
// connection is given afterwards (startAt), which the calling protocol
// makes the time of the close itself, since NextDatagram and NextTimer
// follow every input. Our CONNECTION_CLOSE starts it again when it first
// goes out.
type closingState struct {
	// err is why the connection closed, nil while it is active.
	err error

	packet   []byte // nil when no packet could carry our CONNECTION_CLOSE
	pending  bool   // packet should go out
	received int    // datagrams received while closing
	reply    int    // answer when received reaches it; doubles each time
	sent     bool   // the CONNECTION_CLOSE went out once

	// deadline ends the period, once started.
	deadline time.Duration
	started  bool
}

// startClosing records a close by this endpoint: packet carries its
// CONNECTION_CLOSE, and answers the first datagram the peer sends after it.
func (cl *closingState) startClosing(packet []byte) {
	cl.packet = packet
	cl.pending = packet != nil
	cl.reply = 1
}

// startAt starts the closing or draining period at now unless it started.
func (cl *closingState) startAt(now, pto time.Duration) {
	if !cl.started {
		cl.deadline, cl.started = now+3*pto, true
	}
}

// onDatagram answers the peer's packets with our CONNECTION_CLOSE, less
// and less often (RFC 9000 section 10.2.1).
func (cl *closingState) onDatagram() {
	cl.received++
	if cl.received >= cl.reply && cl.packet != nil {
		cl.pending = true
		cl.reply *= 2
	}
}

// take returns the CONNECTION_CLOSE datagram if it is due and budget, the
// bytes the anti-amplification limit allows, holds it (RFC 9000 section
// 8.1); a datagram it does not hold is not sent.
func (cl *closingState) take(now, pto time.Duration, budget uint64) ([]byte, bool) {
	cl.startAt(now, pto)
	if !cl.pending {
		return nil, false
	}
	cl.pending = false
	if uint64(len(cl.packet)) > budget {
		return nil, false
	}
	if !cl.sent {
		cl.sent = true
		cl.deadline = now + 3*pto
	}
	return cl.packet, true
}

// timer is when the period ends, starting it at now if it has not.
func (cl *closingState) timer(now, pto time.Duration) (time.Duration, bool) {
	cl.startAt(now, pto)
	return cl.deadline, true
}

// over reports whether the period ended at now. A CONNECTION_CLOSE not
// sent yet goes out first.
func (cl *closingState) over(now, pto time.Duration) bool {
	cl.startAt(now, pto)
	return now >= cl.deadline && !cl.pending
}

// An active connection ends in one of three ways (RFC 9000 section 10),
// each made by end, which reports it with EventClosed: it is closing once
// this endpoint sent CONNECTION_CLOSE (Close, closeLocal), draining once
// the peer sent one (onPeerClose) or a Stateless Reset (section 10.3.1),
// closed at once after an idle or handshake timeout. A closing or draining
// connection is closed when its period is over (HandleTimer, setClosed).

// Close closes the connection at now with an application error code and
// reason (CONNECTION_CLOSE of type 0x1d, RFC 9000 section 10.2). The
// connection enters the closing state; EventClosed follows.
func (c *Conn) Close(now time.Duration, code uint64, reason string) {
	if c.state != stateActive {
		return
	}
	f := wire.ConnectionCloseFrame{IsApplicationError: true, ErrorCode: code, ReasonPhrase: truncateReason(reason)}
	c.enterClosing(f, &ConnError{Application: true, Code: code, Reason: reason})
	c.closing.startAt(now, probeTimeout(c.sender.RTT()))
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

// enterClosing sends CONNECTION_CLOSE f and starts the closing period
// (RFC 9000 section 10.2.1).
func (c *Conn) enterClosing(f wire.ConnectionCloseFrame, err error) {
	c.closing.startClosing(c.buildClosePacket(f))
	c.end(stateClosing, err)
}

// Draining reports whether the connection waits out the draining period
// after the peer closed it (RFC 9000 section 10.2.2): it sends nothing,
// drops what it receives, and only its timer, which ends the period,
// changes it.
func (c *Conn) Draining() bool { return c.state == stateDraining }

// CloseSent reports whether the connection is closing and its
// CONNECTION_CLOSE went out (RFC 9000 section 10.2.1): it then sends only
// that datagram again, in answer to the peer's (Step, NextDatagram), and
// only its timer, which ends the period, changes it otherwise.
func (c *Conn) CloseSent() bool {
	return c.state == stateClosing && c.closing.sent && !c.closing.pending
}

// onPeerClose enters the draining state after the peer's CONNECTION_CLOSE
// (RFC 9000 section 10.2.2): nothing more is sent.
func (c *Conn) onPeerClose(f *wire.ConnectionCloseFrame) {
	if c.state != stateActive {
		return
	}
	c.end(stateDraining, &ConnError{
		Application: f.IsApplicationError, Code: f.ErrorCode,
		FrameType: uint64(f.TriggerType), Reason: f.ReasonPhrase, Remote: true,
	})
}

// end moves the connection to next for err, which Err returns and
// EventClosed reports: closing or draining until the period of three PTOs
// is over, or closed at once and silently, as after an idle or handshake
// timeout or a failed version negotiation (RFC 9000 sections 6.2, 10.1
// and 10.2).
func (c *Conn) end(next connState, err error) {
	c.closing.err = err
	c.events.push(Event{Kind: EventClosed, Err: err})
	c.releaseSendData()
	if next == stateClosed {
		c.setClosed()
		return
	}
	c.state = next
}

// releaseSendData gives the pools back the blocks of the data that will
// never be sent again once the connection left the active state: the
// streams' unacknowledged bytes and the CRYPTO data of every space, sent
// or received. Most connections end with some of it unacknowledged (a
// response whose ACK rode on the peer's CONNECTION_CLOSE, a session
// ticket), and blocks left to the garbage collector are blocks the next
// connections allocate again. Received stream data stays: the
// application may still read it.
func (c *Conn) releaseSendData() {
	for _, sp := range c.spaces {
		sp.cryptoSend.release()
		sp.cryptoRecv.releaseBlocks()
	}
	for _, s := range c.streams.m {
		if s.send != nil {
			s.send.buf.release()
		}
	}
}

// closingDatagram returns the CONNECTION_CLOSE datagram if it is due.
func (c *Conn) closingDatagram(now time.Duration, buf []byte) ([]byte, bool) {
	pkt, ok := c.closing.take(now, probeTimeout(c.sender.RTT()), c.amp.budget())
	if !ok {
		return nil, false
	}
	c.amp.onSent(len(pkt))
	c.stats.DatagramsSent++
	c.stats.BytesSent += uint64(len(pkt))
	return append(buf[:0], pkt...), true
}

// buildClosePacket builds the datagram carrying CONNECTION_CLOSE f in
// every space the peer may be able to read. In Initial and Handshake
// packets an application close becomes an APPLICATION_ERROR transport
// close without its reason, which must not leak before the handshake is
// confirmed (RFC 9000 section 10.2.3).
func (c *Conn) buildClosePacket(f wire.ConnectionCloseFrame) []byte {
	if len(c.cids.peer) == 0 {
		return nil
	}
	// A writer of its own: the connection's may hold a datagram being
	// built. The packets are not held to one datagram's size.
	size := numSpaces * c.maxDatagram
	room := getCloseBuffer(size + datagramSlack)
	defer closeBuffers.Put(room)
	var w packetWriter
	w.reset((*room)[:0], size)
	for s := range recovery.Space(numSpaces) {
		if !c.canSendIn(s) || (s != spaceApp && c.handshakeConfirmed) {
			continue
		}
		sf := f
		if s != spaceApp && f.IsApplicationError {
			sf = wire.ConnectionCloseFrame{ErrorCode: wire.CodeApplicationError}
		}
		if !c.startPacket(&w, s) {
			continue
		}
		if !w.appendFrame(sf.Len(), sf.Append) {
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
	out, err := w.seal()
	if err != nil {
		return nil
	}
	// The closing state keeps the datagram: a copy of its own size.
	return append([]byte(nil), out...)
}

// closeBuffers lend buildClosePacket the room of numSpaces datagrams,
// which it would otherwise allocate for each connection that closes,
// mostly to send a CONNECTION_CLOSE of a few dozen bytes in one 1-RTT
// packet: 4 KiB of the 110 KiB a client allocated for a connection with
// one request.
var closeBuffers sync.Pool // of *[]byte

// getCloseBuffer returns a buffer of closeBuffers with room for n bytes.
func getCloseBuffer(n int) *[]byte {
	if b, ok := closeBuffers.Get().(*[]byte); ok && cap(*b) >= n {
		return b
	}
	b := make([]byte, 0, n)
	return &b
}
