package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// hasDataIn reports whether space s has ack-eliciting frames to send.
func (c *Conn) hasDataIn(s recovery.Space) bool {
	if c.spaces[s].cryptoSend.hasPending(wire.MaxVarint) {
		return true
	}
	return s == spaceApp && c.hasAppData()
}

// hasAppData reports whether the application space has ack-eliciting
// frames to send: control frames, or stream data within flow control. It
// asks what appendEliciting appends.
func (c *Conn) hasAppData() bool {
	switch {
	case c.handshakeDonePend, c.idle.ping, c.newToken.pending:
		return true
	case c.bdp.hasFrame(c.early.sending()), c.ackFreq.send.pending && !c.early.sending():
		return true
	case c.flow.hasFrames(), c.streams.hasControl(), c.cids.hasFrames():
		return true
	}
	return c.maySendStreams() && (c.dgram.hasQueued() || c.streams.hasSendable(c.flow.sendCredit()))
}

// appendEliciting appends the ack-eliciting frames of space s: in the
// application space the connection's control frames first (RFC 9000
// section 13.3 says which are sent again when lost, with fresh values),
// then CRYPTO frames, then DATAGRAM frames (datagram_send.go), then stream
// data.
func (c *Conn) appendEliciting(now time.Duration, w *packetWriter, s recovery.Space) {
	if s == spaceApp {
		if c.handshakeDonePend && w.appendHandshakeDone() {
			c.handshakeDonePend = false
		}
		c.flow.appendFrames(w)
		c.idle.appendPing(w)
		c.newToken.appendFrame(w)
		c.bdp.appendFrame(w)
		c.appendAckFrequency(now, w)
		c.streams.appendLimits(w)
		c.cids.appendFrames(w)
		c.streams.appendControl(w)
	}
	w.appendCrypto(&c.spaces[s].cryptoSend)
	if s == spaceApp && c.maySendStreams() {
		// A server may send stream data before its handshake
		// completes, within a budget that keeps the handshake safe
		// (halfrtt.go). Datagrams are held to the same rule.
		c.appendDatagrams(w)
		c.stats.StreamBytesRetransmitted += c.streams.appendData(w, &c.flow)
	}
}

// hasControl reports whether the streams have control frames to send:
// MAX_STREAMS, STREAMS_BLOCKED, or a stream's in the control queue.
func (m *streamMap) hasControl() bool {
	return m.maxPending[0] || m.maxPending[1] || m.blockedPending[0] || m.blockedPending[1] || len(m.ctrlQueue) > 0
}

// hasSendable reports whether a queued stream can put a STREAM frame in a
// packet now, with credit left in the connection's flow control.
func (m *streamMap) hasSendable(credit uint64) bool {
	for i := range m.sendQueue.len() {
		if m.sendable(*m.sendQueue.at(i), credit) {
			return true
		}
	}
	return false
}

// sendable reports whether a queued stream can put a STREAM frame in a
// packet now, with credit left in the connection's flow control: lost
// data, new data within both flow control limits, or a FIN.
func (m *streamMap) sendable(s *stream, credit uint64) bool {
	sd := s.send
	if sd == nil || sd.reset || m.m[s.id] != s {
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

// appendHandshakeDone appends HANDSHAKE_DONE (RFC 9000 section 19.20)
// and reports whether it fitted.
func (w *packetWriter) appendHandshakeDone() bool {
	var f wire.HandshakeDoneFrame
	if !w.appendFrame(f.Len(), f.Append) {
		return false
	}
	w.record(sentFrame{kind: fkHandshakeDone})
	return true
}

// appendFrames appends MAX_DATA and DATA_BLOCKED when they are due.
func (f *connFlow) appendFrames(w *packetWriter) {
	if f.limitPending {
		mf := wire.MaxDataFrame{Maximum: f.advertisedMax}
		if w.appendFrame(mf.Len(), mf.Append) {
			f.limitPending = false
			f.recv.limit = f.advertisedMax
			w.record(sentFrame{kind: fkMaxData, n: f.advertisedMax})
		}
	}
	if f.blockedQueue {
		bf := wire.DataBlockedFrame{Limit: f.blockedAt}
		if w.appendFrame(bf.Len(), bf.Append) {
			f.blockedQueue = false
			w.record(sentFrame{kind: fkDataBlocked, n: f.blockedAt})
		}
	}
}

// appendPing appends the keep-alive PING when one is due (idle.go).
func (i *idleState) appendPing(w *packetWriter) {
	if !i.ping {
		return
	}
	var f wire.PingFrame
	if w.appendFrame(f.Len(), f.Append) {
		i.ping = false
		w.record(sentFrame{kind: fkPing})
	}
}

// appendLimits appends MAX_STREAMS and STREAMS_BLOCKED frames.
func (m *streamMap) appendLimits(w *packetWriter) {
	for d := range 2 {
		uni := d == 1
		if m.maxPending[d] {
			f := wire.MaxStreamsFrame{Unidirectional: uni, Maximum: m.localMax[d]}
			if w.appendFrame(f.Len(), f.Append) {
				m.maxPending[d] = false
				w.record(sentFrame{kind: fkMaxStreamsBidi + frameKind(d)})
			}
		}
		if m.blockedPending[d] {
			f := wire.StreamsBlockedFrame{Unidirectional: uni, Limit: m.blockedAt[d]}
			if w.appendFrame(f.Len(), f.Append) {
				m.blockedPending[d] = false
				w.record(sentFrame{kind: fkStreamsBlockedBidi + frameKind(d), n: m.blockedAt[d]})
			}
		}
	}
}

// hasFrames reports whether NEW_CONNECTION_ID or RETIRE_CONNECTION_ID
// frames are to be sent.
func (ids *connIDs) hasFrames() bool { return len(ids.announce) > 0 || len(ids.retire) > 0 }

// appendFrames appends NEW_CONNECTION_ID and RETIRE_CONNECTION_ID frames.
func (ids *connIDs) appendFrames(w *packetWriter) {
	for len(ids.announce) > 0 {
		l := ids.localBySeq(ids.announce[0])
		if l == nil {
			ids.announce = ids.announce[1:]
			continue
		}
		f := wire.NewConnectionIDFrame{SequenceNumber: l.seq, ConnectionID: l.id, StatelessResetToken: l.token}
		if !w.appendFrame(f.Len(), f.Append) {
			break
		}
		ids.announce = ids.announce[1:]
		w.record(sentFrame{kind: fkNewConnID, id: l.seq})
	}
	for len(ids.retire) > 0 {
		f := wire.RetireConnectionIDFrame{SequenceNumber: ids.retire[0]}
		if !w.appendFrame(f.Len(), f.Append) {
			break
		}
		w.record(sentFrame{kind: fkRetireConnID, id: ids.retire[0]})
		ids.retire = ids.retire[1:]
	}
}

// appendControl appends the control frames of the streams in the control
// queue: MAX_STREAM_DATA, STOP_SENDING, RESET_STREAM and
// STREAM_DATA_BLOCKED. A stream leaves the queue when none remains.
func (m *streamMap) appendControl(w *packetWriter) {
	keep := m.ctrlQueue[:0]
	for i, s := range m.ctrlQueue {
		if m.m[s.id] != s || s.appendControl(w) {
			s.inCtrlQueue = false
			continue
		}
		keep = append(keep, s)
		if w.room() < 8 {
			keep = append(keep, m.ctrlQueue[i+1:]...)
			break
		}
	}
	clear(m.ctrlQueue[len(keep):])
	m.ctrlQueue = keep
}

// appendControl appends the pending control frames of s and reports
// whether none remains.
func (s *stream) appendControl(w *packetWriter) bool {
	if r := s.recv; r != nil {
		if r.limitPending && !r.hasFinal && !r.stopped {
			f := wire.MaxStreamDataFrame{StreamID: s.id, Maximum: r.win.limit}
			if w.appendFrame(f.Len(), f.Append) {
				r.limitPending = false
				w.record(sentFrame{kind: fkMaxStreamData, id: s.id})
			}
		} else {
			r.limitPending = false
		}
		if r.stopPending {
			f := wire.StopSendingFrame{StreamID: s.id, ErrorCode: r.stopCode}
			if w.appendFrame(f.Len(), f.Append) {
				r.stopPending = false
				w.record(sentFrame{kind: fkStopSending, id: s.id})
			}
		}
	}
	if sd := s.send; sd != nil {
		if sd.resetPending {
			f := wire.ResetStreamFrame{StreamID: s.id, ErrorCode: sd.resetCode, FinalSize: sd.buf.written}
			if w.appendFrame(f.Len(), f.Append) {
				sd.resetPending = false
				w.record(sentFrame{kind: fkResetStream, id: s.id})
			}
		}
		if sd.blockedPending {
			f := wire.StreamDataBlockedFrame{StreamID: s.id, Limit: sd.blockedAt}
			if w.appendFrame(f.Len(), f.Append) {
				sd.blockedPending = false
				w.record(sentFrame{kind: fkStreamDataBlocked, id: s.id, n: sd.blockedAt})
			}
		}
	}
	pending := (s.recv != nil && (s.recv.limitPending || s.recv.stopPending)) ||
		(s.send != nil && (s.send.resetPending || s.send.blockedPending))
	return !pending
}

// appendData appends STREAM frames from the send queue, round robin:
// each stream gets one frame per turn, lost data before new data (RFC 9000
// section 13.3). New data counts against the connection's flow control
// fl. A stream held back by its own flow control limit leaves the queue
// until MAX_STREAM_DATA; one held back by the connection's stays. It
// returns the bytes of lost data sent again.
func (m *streamMap) appendData(w *packetWriter, fl *connFlow) (resent uint64) {
	idle := 0 // turns in a row that sent nothing
	for m.sendQueue.len() > 0 && idle < m.sendQueue.len() && w.room() > 16 {
		s := m.sendQueue.popFront()
		if m.m[s.id] != s || !s.send.hasData() {
			s.inSendQueue = false
			continue
		}
		if !m.sendable(s, fl.sendCredit()) {
			m.noteBlocked(s, fl)
			if s.send.buf.next >= s.send.maxData && !s.send.buf.hasLost() {
				s.inSendQueue = false
				continue
			}
			m.sendQueue.pushBack(s)
			idle++
			continue
		}
		limit := min(s.send.maxData, s.send.buf.next+fl.sendCredit())
		rg, isNew, sent := s.appendDataFrame(w, limit)
		m.sendQueue.pushBack(s)
		if !sent {
			break // the packet is full
		}
		if isNew {
			fl.sent += rg.len()
		} else {
			resent += rg.len()
		}
		idle = 0
	}
	return resent
}

// appendDataFrame appends one STREAM frame of s if one fits: lost data
// first, else new data below limit (the stream's and the connection's
// flow control), and the FIN once all data is sent. It returns the range
// of data sent and whether it is new.
func (s *stream) appendDataFrame(w *packetWriter, limit uint64) (rg span, isNew, ok bool) {
	sd := s.send
	off := sd.buf.next
	if sd.buf.hasLost() {
		off = sd.buf.lost.min()
	}
	n, ok := wire.MaxStreamDataLen(w.room(), s.id, off, true)
	if !ok {
		return span{}, false, false
	}
	rg, isNew = sd.buf.nextRange(uint64(n), limit)
	fin := sd.finQueue && !sd.finSent && rg.hi == sd.buf.written && sd.buf.next == sd.buf.written
	if rg.len() == 0 && !fin {
		return span{}, false, false
	}
	f := wire.StreamFrame{StreamID: s.id, Offset: rg.lo, Fin: fin, DataLenPresent: true}
	if !w.appendStreamFrame(&f, &sd.buf, rg) {
		return span{}, false, false
	}
	if fin {
		sd.finSent = true
	}
	w.record(sentFrame{kind: fkStream, id: s.id, off: rg.lo, n: rg.len(), fin: fin})
	return rg, isNew, true
}

// noteBlocked queues STREAM_DATA_BLOCKED, or DATA_BLOCKED through fl,
// when flow control keeps a stream's data back (RFC 9000 section 4.1).
func (m *streamMap) noteBlocked(s *stream, fl *connFlow) {
	sd := s.send
	if sd == nil || sd.reset || sd.buf.next >= sd.buf.written {
		return
	}
	if sd.buf.next >= sd.maxData && sd.blockedAt != sd.maxData {
		sd.blockedAt, sd.blockedPending = sd.maxData, true
		m.queueCtrl(s)
	}
	fl.noteBlocked()
}
