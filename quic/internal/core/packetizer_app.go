package core

import (
	"github.com/satquic/satquic/quic/internal/wire"
)

// hasAppData reports whether the application space has ack-eliciting
// frames to send: control frames or stream data within flow control.
func (c *Conn) hasAppData() bool {
	m := &c.streams
	switch {
	case c.handshakeDonePend, c.flow.limitPending, c.flow.blockedQueue, c.idle.ping, c.newToken.pending:
		return true
	case m.maxPending[0], m.maxPending[1], m.blockedPending[0], m.blockedPending[1]:
		return true
	case len(c.cids.announce) > 0, len(c.cids.retire) > 0, len(c.pathResponses) > 0:
		return true
	case len(m.ctrlQueue) > 0:
		return true
	}
	if !c.maySendStreams() {
		return false
	}
	credit := c.flow.sendCredit()
	for i := range m.sendQueue.len() {
		if c.streamSendable(*m.sendQueue.at(i), credit) {
			return true
		}
	}
	return false
}

// streamSendable reports whether a queued stream can put a STREAM frame in
// a packet now: lost data, new data within both flow control limits, or
// a FIN.
func (c *Conn) streamSendable(s *stream, credit uint64) bool {
	sd := s.send
	if sd == nil || sd.reset || c.streams.m[s.id] != s {
		return false
	}
	if sd.buf.hasLost() {
		return true
	}
	limit := min(sd.maxData, sd.buf.next+credit)
	if sd.buf.next < min(sd.buf.written, limit) {
		return true
	}
	return sd.finQueue && !sd.finSent && sd.buf.next == sd.buf.written
}

// fits appends f to b if it fits within avail bytes. f escapes: frames
// sent often come from the connection's frameScratch.
func (c *Conn) fits(b []byte, avail int, f wire.Frame) ([]byte, bool) {
	if len(b)+f.Len() > avail {
		return b, false
	}
	out, err := f.Append(b)
	if err != nil {
		c.frameAppendFailed(f.Type(), err)
		return b, false
	}
	return out, true
}

// frameAppendFailed closes the connection on a frame this endpoint could
// not encode: a bug, never the peer's doing.
func (c *Conn) frameAppendFailed(t wire.FrameType, err error) {
	c.closeLocal(transportError(wire.CodeInternalError, 0, "%v frame: %v", t, err))
}

// appendControl appends the connection's control frames (RFC 9000 section
// 13.3 says which are sent again when lost, with fresh values).
func (c *Conn) appendControl(b []byte, frames []sentFrame, avail int) ([]byte, []sentFrame) {
	var ok bool
	if c.handshakeDonePend {
		if b, ok = c.fits(b, avail, &wire.HandshakeDoneFrame{}); ok {
			c.handshakeDonePend = false
			frames = append(frames, sentFrame{kind: fkHandshakeDone})
		}
	}
	if c.flow.limitPending {
		c.flowFrames.maxData = wire.MaxDataFrame{Maximum: c.flow.advertisedMax}
		if b, ok = c.fits(b, avail, &c.flowFrames.maxData); ok {
			c.flow.limitPending = false
			c.flow.recv.limit = c.flow.advertisedMax
			frames = append(frames, sentFrame{kind: fkMaxData, n: c.flow.advertisedMax})
		}
	}
	if c.flow.blockedQueue {
		c.flowFrames.dataBlocked = wire.DataBlockedFrame{Limit: c.flow.blockedAt}
		if b, ok = c.fits(b, avail, &c.flowFrames.dataBlocked); ok {
			c.flow.blockedQueue = false
			frames = append(frames, sentFrame{kind: fkDataBlocked, n: c.flow.blockedAt})
		}
	}
	if c.idle.ping {
		if b, ok = c.fits(b, avail, &wire.PingFrame{}); ok {
			c.idle.ping = false
			frames = append(frames, sentFrame{kind: fkPing})
		}
	}
	b, frames = c.appendNewToken(b, frames, avail)
	b, frames = c.appendStreamLimits(b, frames, avail)
	b, frames = c.appendConnIDFrames(b, frames, avail)
	for len(c.pathResponses) > 0 {
		// PATH_RESPONSE is never sent again (RFC 9000 section 13.3).
		if b, ok = c.fits(b, avail, &wire.PathResponseFrame{Data: c.pathResponses[0]}); !ok {
			break
		}
		c.pathResponses = c.pathResponses[1:]
		frames = append(frames, sentFrame{kind: fkPathResponse})
	}
	return c.appendStreamControl(b, frames, avail)
}

// appendStreamLimits appends MAX_STREAMS and STREAMS_BLOCKED frames.
func (c *Conn) appendStreamLimits(b []byte, frames []sentFrame, avail int) ([]byte, []sentFrame) {
	m := &c.streams
	var ok bool
	for d := range 2 {
		uni := d == 1
		if m.maxPending[d] {
			c.flowFrames.maxStreams = wire.MaxStreamsFrame{Unidirectional: uni, Maximum: m.localMax[d]}
			if b, ok = c.fits(b, avail, &c.flowFrames.maxStreams); ok {
				m.maxPending[d] = false
				frames = append(frames, sentFrame{kind: fkMaxStreamsBidi + frameKind(d)})
			}
		}
		if m.blockedPending[d] {
			if b, ok = c.fits(b, avail, &wire.StreamsBlockedFrame{Unidirectional: uni, Limit: m.blockedAt[d]}); ok {
				m.blockedPending[d] = false
				frames = append(frames, sentFrame{kind: fkStreamsBlockedBidi + frameKind(d), n: m.blockedAt[d]})
			}
		}
	}
	return b, frames
}

// appendConnIDFrames appends NEW_CONNECTION_ID and RETIRE_CONNECTION_ID
// frames.
func (c *Conn) appendConnIDFrames(b []byte, frames []sentFrame, avail int) ([]byte, []sentFrame) {
	ids := &c.cids
	var ok bool
	for len(ids.announce) > 0 {
		l := ids.localBySeq(ids.announce[0])
		if l == nil {
			ids.announce = ids.announce[1:]
			continue
		}
		f := wire.NewConnectionIDFrame{SequenceNumber: l.seq, ConnectionID: l.id, StatelessResetToken: l.token}
		if b, ok = c.fits(b, avail, &f); !ok {
			break
		}
		ids.announce = ids.announce[1:]
		frames = append(frames, sentFrame{kind: fkNewConnID, id: l.seq})
	}
	for len(ids.retire) > 0 {
		if b, ok = c.fits(b, avail, &wire.RetireConnectionIDFrame{SequenceNumber: ids.retire[0]}); !ok {
			break
		}
		frames = append(frames, sentFrame{kind: fkRetireConnID, id: ids.retire[0]})
		ids.retire = ids.retire[1:]
	}
	return b, frames
}

// appendStreamControl appends the control frames of streams:
// MAX_STREAM_DATA, STOP_SENDING, RESET_STREAM and STREAM_DATA_BLOCKED.
func (c *Conn) appendStreamControl(b []byte, frames []sentFrame, avail int) ([]byte, []sentFrame) {
	m := &c.streams
	keep := m.ctrlQueue[:0]
	for i, s := range m.ctrlQueue {
		var done bool
		b, frames, done = c.appendOneStreamControl(s, b, frames, avail)
		if !done {
			keep = append(keep, s)
			if len(b)+8 > avail {
				keep = append(keep, m.ctrlQueue[i+1:]...)
				break
			}
			continue
		}
		s.inCtrlQueue = false
	}
	clear(m.ctrlQueue[len(keep):])
	m.ctrlQueue = keep
	return b, frames
}

// appendOneStreamControl appends the pending control frames of one stream
// and reports whether none remains.
func (c *Conn) appendOneStreamControl(s *stream, b []byte, frames []sentFrame, avail int) ([]byte, []sentFrame, bool) {
	if c.streams.m[s.id] != s {
		return b, frames, true
	}
	var ok bool
	if r := s.recv; r != nil {
		if r.limitPending && !r.hasFinal && !r.stopped {
			c.flowFrames.maxStreamData = wire.MaxStreamDataFrame{StreamID: s.id, Maximum: r.win.limit}
			if b, ok = c.fits(b, avail, &c.flowFrames.maxStreamData); ok {
				r.limitPending = false
				frames = append(frames, sentFrame{kind: fkMaxStreamData, id: s.id})
			}
		} else {
			r.limitPending = false
		}
		if r.stopPending {
			if b, ok = c.fits(b, avail, &wire.StopSendingFrame{StreamID: s.id, ErrorCode: r.stopCode}); ok {
				r.stopPending = false
				frames = append(frames, sentFrame{kind: fkStopSending, id: s.id})
			}
		}
	}
	if sd := s.send; sd != nil {
		if sd.resetPending {
			f := wire.ResetStreamFrame{StreamID: s.id, ErrorCode: sd.resetCode, FinalSize: sd.buf.written}
			if b, ok = c.fits(b, avail, &f); ok {
				sd.resetPending = false
				frames = append(frames, sentFrame{kind: fkResetStream, id: s.id})
			}
		}
		if sd.blockedPending {
			c.flowFrames.streamDataBlocked = wire.StreamDataBlockedFrame{StreamID: s.id, Limit: sd.blockedAt}
			if b, ok = c.fits(b, avail, &c.flowFrames.streamDataBlocked); ok {
				sd.blockedPending = false
				frames = append(frames, sentFrame{kind: fkStreamDataBlocked, id: s.id, n: sd.blockedAt})
			}
		}
	}
	pending := (s.recv != nil && (s.recv.limitPending || s.recv.stopPending)) ||
		(s.send != nil && (s.send.resetPending || s.send.blockedPending))
	return b, frames, !pending
}

// appendStreams appends STREAM frames from the send queue, round robin:
// each stream gets one frame per turn, lost data before new data (RFC 9000
// section 13.3). A stream held back by its own flow control limit leaves
// the queue until MAX_STREAM_DATA; one held back by the connection's stays.
func (c *Conn) appendStreams(b []byte, frames []sentFrame, avail int) ([]byte, []sentFrame) {
	m := &c.streams
	idle := 0 // turns in a row that sent nothing
	for m.sendQueue.len() > 0 && idle < m.sendQueue.len() && avail-len(b) > 16 {
		s := m.sendQueue.popFront()
		if m.m[s.id] != s || !s.send.hasData() {
			s.inSendQueue = false
			continue
		}
		if !c.streamSendable(s, c.flow.sendCredit()) {
			c.noteBlocked(s)
			if s.send.buf.next >= s.send.maxData && !s.send.buf.hasLost() {
				s.inSendQueue = false
				continue
			}
			m.sendQueue.pushBack(s)
			idle++
			continue
		}
		var sent bool
		b, frames, sent = c.appendStreamFrame(s, b, frames, avail)
		m.sendQueue.pushBack(s)
		if !sent {
			break // the packet is full
		}
		idle = 0
	}
	return b, frames
}

// appendStreamFrame appends one STREAM frame of s if one fits.
func (c *Conn) appendStreamFrame(s *stream, b []byte, frames []sentFrame, avail int) ([]byte, []sentFrame, bool) {
	sd := s.send
	if !c.streamSendable(s, c.flow.sendCredit()) {
		return b, frames, false
	}
	off := sd.buf.next
	if sd.buf.hasLost() {
		off = sd.buf.lost.min()
	}
	n, ok := wire.MaxStreamDataLen(avail-len(b), s.id, off, true)
	if !ok {
		return b, frames, false
	}
	limit := min(sd.maxData, sd.buf.next+c.flow.sendCredit())
	rg, isNew := sd.buf.nextRange(uint64(n), limit)
	fin := sd.finQueue && !sd.finSent && rg.hi == sd.buf.written && sd.buf.next == sd.buf.written
	if rg.len() == 0 && !fin {
		return b, frames, false
	}
	data := c.streamBytes(&sd.buf, rg)
	f := wire.StreamFrame{StreamID: s.id, Offset: rg.lo, Data: data, Fin: fin, DataLenPresent: true}
	out, err := f.Append(b)
	if err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "STREAM frame: %v", err))
		return b, frames, false
	}
	if isNew {
		c.flow.sent += rg.len()
	} else {
		c.stats.StreamBytesRetransmitted += rg.len()
	}
	if fin {
		sd.finSent = true
	}
	frames = append(frames, sentFrame{kind: fkStream, id: s.id, off: rg.lo, n: rg.len(), fin: fin})
	return out, frames, true
}

// noteBlocked queues STREAM_DATA_BLOCKED or DATA_BLOCKED when flow control
// keeps a stream's data back (RFC 9000 section 4.1).
func (c *Conn) noteBlocked(s *stream) {
	sd := s.send
	if sd == nil || sd.reset || sd.buf.next >= sd.buf.written {
		return
	}
	if sd.buf.next >= sd.maxData && sd.blockedAt != sd.maxData {
		sd.blockedAt, sd.blockedPending = sd.maxData, true
		c.streams.queueCtrl(s)
	}
	if c.flow.sendCredit() == 0 && c.flow.blockedAt != c.flow.sendMax {
		c.flow.blockedAt, c.flow.blockedQueue = c.flow.sendMax, true
	}
}
