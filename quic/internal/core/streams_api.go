package core

import (
	"io"
	"time"
)

// SetStreamMemory makes alloc give the memory of each stream the
// connection creates from now on, local or the peer's, with the stream's
// ID: a driver that keeps a state of its own per stream allocates the two
// together. alloc runs inside OpenStream and Step, and returns memory
// that no stream used before, zeroed, as new(StreamMemory) gives. The
// core holds the memory until it forgets the stream; the driver's state
// around it lives as long as either holds it.
func (c *Conn) SetStreamMemory(alloc func(id uint64) *StreamMemory) { c.streams.alloc = alloc }

// OpenStream opens a bidirectional or unidirectional stream and returns
// its ID. It fails with ErrStreamLimit while the peer's limit does not allow
// another stream (EventStreamsAvailable tells when it does), and with
// ErrHandshakeIncomplete before the peer's transport parameters arrived.
func (c *Conn) OpenStream(now time.Duration, bidi bool) (uint64, error) {
	if err := c.state.checkOpen(); err != nil {
		return 0, err
	}
	if !c.hasPeer && !c.early.sending() {
		// Before the server's parameters, a client may open streams
		// only under the remembered ones of 0-RTT.
		return 0, ErrHandshakeIncomplete
	}
	return c.streams.open(now, bidi)
}

// StreamsOpenable is how many more streams of the type OpenStream may open
// under the peer's limit now (RFC 9000 section 4.6), so that a driver
// wakes as many waiting callers as may succeed.
func (c *Conn) StreamsOpenable(bidi bool) uint64 {
	d := dirOfBidi(bidi)
	m := &c.streams
	if m.nextLocal[d] >= m.peerMax[d] {
		return 0
	}
	return m.peerMax[d] - m.nextLocal[d]
}

// checkOpen fails once the connection is closing: the application no
// longer opens, writes, resets or stops streams.
func (s connState) checkOpen() error {
	if s != stateActive {
		return ErrClosed
	}
	return nil
}

// StreamWrite buffers p for sending on a stream and returns how many bytes
// it took: fewer than len(p) when the stream's send buffer is full, in
// which case EventStreamWritable tells when there is room. After the peer's
// STOP_SENDING it fails with a *StreamError.
func (c *Conn) StreamWrite(id uint64, p []byte) (int, error) {
	if err := c.state.checkOpen(); err != nil {
		return 0, err
	}
	s, err := c.streams.get(id)
	if err != nil {
		return 0, err
	}
	sd := s.send
	switch {
	case sd == nil:
		return 0, ErrStreamDirection
	case sd.stopped:
		return 0, &StreamError{StreamID: id, Code: sd.stopCode, Remote: true}
	case sd.reset || sd.finQueue:
		return 0, ErrWriteClosed
	}
	room := c.streams.sendRoom(&sd.buf)
	n := int(min(uint64(len(p)), room))
	if n < len(p) {
		c.streams.waitWritable(s)
	}
	if n > 0 {
		sd.buf.write(p[:n])
		c.streams.queueSend(s)
	}
	return n, nil
}

// CloseWrite ends the sending part of a stream: a FIN follows the data
// written (RFC 9000 section 3.1).
func (c *Conn) CloseWrite(id uint64) error {
	if err := c.state.checkOpen(); err != nil {
		return err
	}
	s, err := c.streams.get(id)
	if err != nil {
		return err
	}
	sd := s.send
	switch {
	case sd == nil:
		return ErrStreamDirection
	case sd.stopped:
		// The peer's STOP_SENDING reset the stream: its code says why,
		// as StreamWrite reports it (RFC 9000 section 3.5).
		return &StreamError{StreamID: id, Code: sd.stopCode, Remote: true}
	case sd.reset:
		return ErrWriteClosed
	case sd.finQueue:
		return nil
	}
	sd.finQueue = true
	c.streams.queueSend(s)
	return nil
}

// ResetStream abandons the sending part of a stream with an application
// error code (RESET_STREAM, RFC 9000 section 19.4).
func (c *Conn) ResetStream(id, code uint64) error {
	if err := c.state.checkOpen(); err != nil {
		return err
	}
	s, err := c.streams.get(id)
	if err != nil {
		return err
	}
	if s.send == nil {
		return ErrStreamDirection
	}
	if !s.send.reset && !s.send.done() {
		c.streams.resetSend(s, code)
	}
	return nil
}

// resetSend replaces the data of a sending part with RESET_STREAM; its
// final size is the data sent so far (RFC 9000 section 4.5).
func (m *streamMap) resetSend(s *stream, code uint64) {
	sd := s.send
	sd.reset, sd.resetCode, sd.resetPending = true, code, true
	sd.buf.written = sd.buf.next
	sd.buf.release()
	m.queueCtrl(s)
}

// StreamRead reads in-order data from a stream. It returns 0 and no error
// when nothing is readable yet (EventStreamReadable tells when), io.EOF
// after the last byte, and a *StreamError if the peer reset the stream.
func (c *Conn) StreamRead(now time.Duration, id uint64, p []byte) (int, error) {
	s, err := c.streams.get(id)
	if err != nil {
		return 0, err
	}
	r := s.recv
	switch {
	case r == nil:
		return 0, ErrStreamDirection
	case r.reset:
		r.resetRead = true
		c.streams.maybeRemove(s)
		return 0, &StreamError{StreamID: id, Code: r.resetCode, Remote: true}
	case r.stopped:
		return 0, &StreamError{StreamID: id, Code: r.stopCode}
	}
	n := r.buf.read(p)
	if n > 0 {
		c.streams.onRead(now, s, uint64(n))
	}
	if r.hasFinal && r.buf.readOff == r.finalSize {
		r.eofRead = true
		c.streams.maybeRemove(s)
		return n, io.EOF
	}
	return n, nil
}

// CreditPending reports whether flow control credit or stream limits
// (MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS) or other stream control frames
// wait to be sent. Most reads open no window update (flow.go sends one
// only once a good part of the window was consumed), so a driver that
// asks this after StreamRead wakes its sending side only for the reads
// that have something to send.
func (c *Conn) CreditPending() bool {
	return c.flow.hasFrames() || c.streams.hasControl()
}

// StreamReadable returns how many bytes StreamRead can return at once.
func (c *Conn) StreamReadable(id uint64) int {
	s := c.streams.m[id]
	if s == nil || s.recv == nil {
		return 0
	}
	return int(s.recv.buf.readable())
}

// StopSending ends the receiving part of a stream: the data not read yet is
// discarded, as is data that arrives later, and StreamRead fails with a
// *StreamError carrying code. While data is still to come, the peer is
// asked to stop sending (STOP_SENDING, RFC 9000 section 19.5).
func (c *Conn) StopSending(now time.Duration, id, code uint64) error {
	if err := c.state.checkOpen(); err != nil {
		return err
	}
	s, err := c.streams.get(id)
	if err != nil {
		return err
	}
	r := s.recv
	if r == nil {
		return ErrStreamDirection
	}
	if r.stopped || r.reset || r.eofRead {
		return nil
	}
	r.stopped, r.stopCode = true, code
	if !r.allReceived() {
		// Section 3.5: in the Recv and Size Known states the peer is
		// asked to stop. In Data Recvd everything arrived and our
		// acknowledgements end the peer's sending part: a STOP_SENDING
		// would at most make it reset a stream that is complete.
		r.stopPending = true
		c.streams.queueCtrl(s)
	}
	// The unread data is dropped and its connection credit released;
	// with all data received the part is done (stopped and complete), so
	// the stream can be forgotten and the peer may open another.
	c.streams.discardRecv(now, s, r.buf.highest)
	c.streams.maybeRemove(s)
	return nil
}

// onRead moves the flow control windows of s and of the connection after
// the application read n bytes of s.
func (m *streamMap) onRead(now time.Duration, s *stream, n uint64) {
	r := s.recv
	fl := &m.c.flow
	srtt := m.c.sender.RTT().SmoothedRTT()
	r.win.observe(r.buf.readOff, now, srtt)
	// Section 4.2: once the final size is known, no more credit is
	// needed.
	if !r.hasFinal && r.win.shouldUpdate(r.buf.readOff) {
		r.win.update(r.buf.readOff, now, srtt)
		r.limitPending = true
		m.queueCtrl(s)
		// The connection window stays ahead of the largest stream
		// window, or it would throttle a single fast stream.
		fl.recv.grow(r.win.window + r.win.window/2)
	}
	fl.onConsumed(n, now, srtt)
}
