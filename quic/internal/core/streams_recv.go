package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// onStreamFrame handles a STREAM frame (RFC 9000 section 19.8).
func (m *streamMap) onStreamFrame(now time.Duration, f *wire.StreamFrame) error {
	ft := f.Type()
	s, err := m.forFrame(now, f.StreamID, ft, partRecv)
	if err != nil || s == nil {
		return err
	}
	r := s.recv
	end := f.Offset + uint64(len(f.Data))
	if err := checkFinalSize(r, end, f.Fin, ft); err != nil {
		return err
	}
	if err := m.onReceivedUpTo(s, end, ft); err != nil {
		return err
	}
	if f.Fin {
		r.finalSize, r.hasFinal = end, true
	}
	if r.reset || r.stopped || r.eofRead {
		// Discarded, but recorded: a stopped part ends once all data
		// arrived.
		m.discardRecv(now, s, r.buf.highest)
		r.buf.push(f.Offset, f.Data)
		m.maybeRemove(s)
		return nil
	}
	r.buf.push(f.Offset, f.Data)
	m.notifyReadable(s)
	return nil
}

// checkFinalSize applies the final size rules of RFC 9000 section 4.5 to
// data ending at end.
func checkFinalSize(r *recvSide, end uint64, fin bool, ft wire.FrameType) error {
	if r.hasFinal && end > r.finalSize {
		return transportError(wire.CodeFinalSizeError, ft, "data up to %d beyond the final size %d", end, r.finalSize)
	}
	if fin && r.hasFinal && end != r.finalSize {
		return transportError(wire.CodeFinalSizeError, ft, "final size changed from %d to %d", r.finalSize, end)
	}
	if fin && end < r.buf.highest {
		return transportError(wire.CodeFinalSizeError, ft, "final size %d below data received up to %d", end, r.buf.highest)
	}
	return nil
}

// onReceivedUpTo enforces stream and connection flow control for data
// reaching end (RFC 9000 section 4.1) and accounts for the new bytes.
func (m *streamMap) onReceivedUpTo(s *stream, end uint64, ft wire.FrameType) error {
	r := s.recv
	if end > r.win.limit {
		return transportError(wire.CodeFlowControlError, ft, "stream %d data up to %d beyond its limit %d", s.id, end, r.win.limit)
	}
	if end <= r.buf.highest {
		return nil
	}
	fl := &m.c.flow
	fl.received += end - r.buf.highest
	if fl.received > fl.recv.limit {
		return transportError(wire.CodeFlowControlError, ft, "connection data %d beyond its limit %d", fl.received, fl.recv.limit)
	}
	r.buf.highest = end
	return nil
}

// discardRecv drops the received bytes of a stream and those that arrive
// later, counting those below off as consumed for connection flow control.
func (m *streamMap) discardRecv(now time.Duration, s *stream, off uint64) {
	r := s.recv
	before := r.buf.consumedTo()
	r.buf.discard(off)
	if d := r.buf.consumedTo() - before; d > 0 {
		m.c.flow.onConsumed(d, now, m.c.sender.RTT().SmoothedRTT())
	}
}

// onResetStream handles RESET_STREAM (RFC 9000 section 19.4).
func (m *streamMap) onResetStream(now time.Duration, f *wire.ResetStreamFrame) error {
	ft := wire.FrameTypeResetStream
	s, err := m.forFrame(now, f.StreamID, ft, partRecv)
	if err != nil || s == nil {
		return err
	}
	r := s.recv
	if r.hasFinal && f.FinalSize != r.finalSize {
		return transportError(wire.CodeFinalSizeError, ft, "final size changed from %d to %d", r.finalSize, f.FinalSize)
	}
	if f.FinalSize < r.buf.highest {
		return transportError(wire.CodeFinalSizeError, ft, "final size %d below data received up to %d", f.FinalSize, r.buf.highest)
	}
	if err := m.onReceivedUpTo(s, f.FinalSize, ft); err != nil {
		return err
	}
	r.finalSize, r.hasFinal = f.FinalSize, true
	if r.reset || r.eofRead {
		return nil
	}
	r.reset, r.resetCode = true, f.ErrorCode
	// Section 3.2: the data is discarded and its credit released.
	m.discardRecv(now, s, f.FinalSize)
	m.notifyReadable(s)
	m.maybeRemove(s)
	return nil
}

// onStopSending handles STOP_SENDING (RFC 9000 section 19.5): the sending
// part is reset with the peer's code (section 3.5).
func (m *streamMap) onStopSending(now time.Duration, f *wire.StopSendingFrame) error {
	s, err := m.forFrame(now, f.StreamID, wire.FrameTypeStopSending, partSend)
	if err != nil || s == nil {
		return err
	}
	sd := s.send
	if sd.stopped {
		return nil
	}
	sd.stopped, sd.stopCode = true, f.ErrorCode
	if !sd.reset && !sd.done() {
		m.resetSend(s, f.ErrorCode)
	}
	m.notifyWritable(s)
	return nil
}

// onMaxStreamData handles MAX_STREAM_DATA (RFC 9000 section 19.10).
func (m *streamMap) onMaxStreamData(now time.Duration, f *wire.MaxStreamDataFrame) error {
	s, err := m.forFrame(now, f.StreamID, wire.FrameTypeMaxStreamData, partSend)
	if err != nil || s == nil {
		return err
	}
	if f.Maximum > s.send.maxData {
		s.send.maxData = f.Maximum
		m.queueSend(s)
	}
	return nil
}

// onStreamDataBlocked handles STREAM_DATA_BLOCKED (RFC 9000 section
// 19.13): only the stream checks matter, the frame is informational.
func (m *streamMap) onStreamDataBlocked(now time.Duration, f *wire.StreamDataBlockedFrame) error {
	_, err := m.forFrame(now, f.StreamID, wire.FrameTypeStreamDataBlocked, partRecv)
	return err
}

// onMaxStreams handles MAX_STREAMS (RFC 9000 section 19.11); a smaller
// limit than before is ignored.
func (m *streamMap) onMaxStreams(f *wire.MaxStreamsFrame) {
	d := dirOfBidi(!f.Unidirectional)
	if f.Maximum <= m.peerMax[d] {
		return
	}
	m.peerMax[d] = f.Maximum
	m.c.events.push(Event{Kind: EventStreamsAvailable, Bidi: !f.Unidirectional})
}

// onStreamsBlocked handles STREAMS_BLOCKED (RFC 9000 section 19.14). It is
// informational: the limit grows as the peer's streams finish, and the
// parser has rejected limits above 2^60.
func (m *streamMap) onStreamsBlocked(*wire.StreamsBlockedFrame) {}
