package core

// Stream IDs (RFC 9000 section 2.1): the low bit says who opened the
// stream, the next one whether it is unidirectional.
const (
	streamServerBit = 0x1
	streamUniBit    = 0x2
)

func streamIsBidi(id uint64) bool { return id&streamUniBit == 0 }

// streamDir indexes per-type state: 0 for bidirectional, 1 for
// unidirectional streams.
func streamDir(id uint64) int { return int(id>>1) & 1 }

func dirOfBidi(bidi bool) int {
	if bidi {
		return 0
	}
	return 1
}

// stream is one stream: a sending part, a receiving part, or both (RFC 9000
// section 3). A part the stream does not have is nil.
type stream struct {
	id   uint64
	send *sendSide
	recv *recvSide

	inSendQueue bool // in streamMap.sendQueue
	inCtrlQueue bool // in streamMap.ctrlQueue
	// readableQueued and writableQueued: an event is in the queue and
	// not polled yet, so another would say nothing new.
	readableQueued bool
	writableQueued bool
}

// sendSide is the sending part of a stream (RFC 9000 section 3.1).
type sendSide struct {
	buf      sendBuffer
	maxData  uint64 // the peer's MAX_STREAM_DATA
	finQueue bool   // the application closed the stream: FIN at buf.written
	finSent  bool   // a frame with the FIN is in flight or acknowledged
	finAcked bool

	// reset: RESET_STREAM replaces the data (ResetStream, or the answer
	// to STOP_SENDING); resetPending until it is sent, resetAcked once
	// acknowledged (the Reset Recvd state).
	reset        bool
	resetCode    uint64
	resetPending bool
	resetAcked   bool

	// stopped: the peer sent STOP_SENDING with stopCode.
	stopped  bool
	stopCode uint64

	blockedAt      uint64 // limit of the last STREAM_DATA_BLOCKED queued
	blockedPending bool
	// wantWritable: a write was cut short, so the application waits for
	// EventStreamWritable.
	wantWritable bool
}

// done reports whether the sending part reached a terminal state: all data
// and the FIN acknowledged (Data Recvd) or the reset acknowledged (Reset
// Recvd).
func (s *sendSide) done() bool {
	if s.reset {
		return s.resetAcked
	}
	return s.finAcked && s.buf.allAcked()
}

// hasData reports whether STREAM frames wait to be sent.
func (s *sendSide) hasData() bool {
	if s.reset {
		return false
	}
	return s.buf.hasPending(s.maxData) || (s.finQueue && !s.finSent && s.buf.next == s.buf.written)
}

// recvSide is the receiving part of a stream (RFC 9000 section 3.2).
type recvSide struct {
	buf          recvBuffer
	win          recvWindow
	limitPending bool // a MAX_STREAM_DATA frame should be sent

	finalSize uint64
	hasFinal  bool

	// reset: the peer sent RESET_STREAM with resetCode; resetRead once
	// the application saw it.
	reset     bool
	resetCode uint64
	resetRead bool
	// eofRead: the application read the FIN.
	eofRead bool

	// stopped: the application sent STOP_SENDING with stopCode; incoming
	// data is discarded. stopPending until the frame is sent.
	stopped     bool
	stopCode    uint64
	stopPending bool
}

// allReceived reports whether every byte up to the final size arrived.
func (r *recvSide) allReceived() bool {
	return r.hasFinal && r.buf.readOff+r.buf.readable() == r.finalSize
}

// done reports whether the receiving part reached a terminal state: the
// application read everything (Data Read) or saw the reset (Reset Read), or
// it stopped reading and the peer finished or reset the stream.
func (r *recvSide) done() bool {
	switch {
	case r.eofRead, r.resetRead:
		return true
	case r.stopped:
		return r.reset || r.allReceived()
	}
	return false
}

// readable reports whether StreamRead has something to return: data, the
// end of the stream, or the reset.
func (r *recvSide) readable() bool {
	if r.stopped || r.eofRead || r.resetRead {
		return false
	}
	return r.reset || r.buf.hasReadable() || (r.hasFinal && r.buf.readOff == r.finalSize)
}
