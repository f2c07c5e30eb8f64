package quic

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
)

// streamState is the driver's side of a stream: what blocked calls wait
// on, and how each direction ended for the application. The fields other
// than the deadlines are guarded by the connection's mutex.
type streamState struct {
	c                *Conn
	id               uint64
	hasRecv, hasSend bool

	readable, writable streamSignal
	// readErr and writeErr are the final results of each direction for
	// the application: io.EOF, a *StreamError, ErrWriteClosed.
	readErr, writeErr error

	readDL, writeDL deadline

	// handle is the application's *Stream of a bidirectional stream,
	// allocated with the state rather than apart, once per request.
	handle Stream
	// mem is the core's memory of the stream, allocated with the state
	// (core.Conn.SetStreamMemory): one allocation per stream, not two.
	mem core.StreamMemory
}

// bidiStream returns the application's handle of a bidirectional stream.
func (s *streamState) bidiStream() *Stream {
	s.handle.s = s
	return &s.handle
}

// streamMemoryLocked gives the core the memory of a new stream, within
// the stream's state, which it tracks from now on; c.mu is held, as the
// core calls it from OpenStream or Step.
func (c *Conn) streamMemoryLocked(id uint64) *core.StreamMemory {
	return &c.newStreamLocked(id).mem
}

// streamLocked returns the state of a stream the core opened: the one
// streamMemoryLocked made, or a new one for a stream the core opened
// before the connection gave it streamMemoryLocked (a server's first
// datagrams, which may carry 0-RTT streams); c.mu is held.
func (c *Conn) streamLocked(id uint64) *streamState {
	if s := c.streams[id]; s != nil {
		return s
	}
	return c.newStreamLocked(id)
}

// newStreamLocked tracks a stream the core opened; c.mu is held.
func (c *Conn) newStreamLocked(id uint64) *streamState {
	bidi := id&0x2 == 0
	local := (id&0x1 == 0) == c.isClient
	s := &streamState{c: c, id: id, hasSend: bidi || local, hasRecv: bidi || !local}
	s.readable.cond.L = &c.mu
	s.writable.cond.L = &c.mu
	c.streams[id] = s
	return s
}

// maybeForgetLocked drops a stream both of whose directions are over for
// the application; late core events for it are ignored.
func (s *streamState) maybeForgetLocked() {
	if (s.hasRecv && s.readErr == nil) || (s.hasSend && s.writeErr == nil) {
		return
	}
	if s.c.streams[s.id] == s {
		delete(s.c.streams, s.id)
	}
	s.stopTimers()
}

// setReadDeadline moves the read deadline and wakes a Read waiting, which
// then waits on the deadline's channel: one that began before any
// deadline was set waits on none (deadline.wait).
func (s *streamState) setReadDeadline(t time.Time) {
	s.readDL.set(t)
	s.c.mu.Lock()
	s.readable.fire()
	s.c.mu.Unlock()
}

// setWriteDeadline does the same for the write deadline and a Write.
func (s *streamState) setWriteDeadline(t time.Time) {
	s.writeDL.set(t)
	s.c.mu.Lock()
	s.writable.fire()
	s.c.mu.Unlock()
}

func (s *streamState) stopTimers() {
	s.readDL.stop()
	s.writeDL.stop()
}

// read blocks until data, the end of the stream, a reset, the deadline or
// the connection's end.
func (s *streamState) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c := s.c
	c.mu.Lock()
	for {
		if s.readDL.passed() {
			c.mu.Unlock()
			return 0, os.ErrDeadlineExceeded
		}
		if s.readErr != nil {
			err := s.readErr
			c.mu.Unlock()
			return 0, err
		}
		n, err := c.core.StreamRead(c.t.now(), s.id, p)
		// Reading may have opened a flow control window: the core then
		// has a MAX_STREAM_DATA or MAX_DATA to send, and the goroutine
		// must wake to send it. Most reads open none, and waking the
		// goroutine for nothing would cost a receiver a goroutine
		// switch per read. So does the read that reaches the end of the
		// stream: it may retire the stream and queue MAX_STREAMS, which
		// CreditPending reports too, but mostly it queues nothing, and
		// waking the goroutine there cost a server a wake-up per request.
		wake := (n > 0 || err == io.EOF) && c.core.CreditPending()
		switch {
		case err == io.EOF:
			s.readErr = io.EOF
			s.maybeForgetLocked()
		case err != nil:
			if c.err != nil && errors.Is(err, core.ErrUnknownStream) {
				err = c.err
			} else {
				err = streamError(err)
				s.readErr = err
				s.maybeForgetLocked()
			}
		case n == 0 && c.err != nil:
			// Data that arrived before the close was still readable;
			// now the connection's error.
			err = c.err
		case n == 0:
			// Nothing read, nothing to send: wait, and look again.
			s.readable.waitLocked(&s.readDL, c.closed)
			continue
		}
		c.mu.Unlock()
		if wake || (err != nil && err != io.EOF) {
			c.signal()
		}
		return n, err
	}
}

// write blocks until the core buffered all of p, or fails.
func (s *streamState) write(p []byte) (int, error) { return s.writeFin(p, false) }

// writeClose is write, then closeWrite under the same lock once all of p
// is buffered, with one wake-up of the connection's goroutine for both.
func (s *streamState) writeClose(p []byte) (int, error) { return s.writeFin(p, true) }

// writeFin blocks until the core buffered all of p, or fails; with fin,
// the write that buffers the last of p also ends the sending direction.
func (s *streamState) writeFin(p []byte, fin bool) (int, error) {
	c := s.c
	total := 0
	c.mu.Lock()
	for {
		if s.writeDL.passed() {
			c.mu.Unlock()
			return total, os.ErrDeadlineExceeded
		}
		if s.writeErr != nil {
			err := s.writeErr
			c.mu.Unlock()
			return total, err
		}
		n, err := c.core.StreamWrite(s.id, p[total:])
		total += n
		wait := false
		switch {
		case errors.Is(err, core.ErrClosed):
			err = c.closeErrLocked()
		case err != nil:
			// STOP_SENDING from the peer: no more writes.
			err = streamError(err)
			s.writeErr = err
			s.maybeForgetLocked()
		case total < len(p) && c.err != nil:
			err = c.err
		case total < len(p):
			wait = true
		case fin:
			err = s.closeWriteLocked()
			n = max(n, 1) // the FIN needs sending
		}
		if wait {
			if n > 0 {
				// What was buffered goes out while the call waits for
				// room: the connection's goroutine takes the mutex
				// the wait releases.
				c.signal()
			}
			s.writable.waitLocked(&s.writeDL, c.closed)
			continue
		}
		c.mu.Unlock()
		if n > 0 {
			c.signal()
		}
		return total, err
	}
}

// closeWrite ends the sending direction with a FIN after the data
// written.
func (s *streamState) closeWrite() error {
	c := s.c
	c.mu.Lock()
	err := s.closeWriteLocked()
	c.mu.Unlock()
	if err == nil {
		c.signal()
	}
	return err
}

// closeWriteLocked is closeWrite with c.mu held, but for the wake-up of
// the connection's goroutine, which the caller gives when it succeeds.
func (s *streamState) closeWriteLocked() error {
	c := s.c
	if s.writeErr != nil {
		return nil
	}
	if err := c.core.CloseWrite(s.id); err != nil {
		if errors.Is(err, core.ErrClosed) {
			return c.closeErrLocked()
		}
		return streamError(err)
	}
	s.writeErr = ErrWriteClosed
	s.writable.fire() // a Write waiting in another goroutine returns
	s.maybeForgetLocked()
	return nil
}

// cancelWrite abandons the sending direction (RESET_STREAM); data not
// yet delivered is not retransmitted.
func (s *streamState) cancelWrite(code StreamErrorCode) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	var se *StreamError
	if errors.As(s.writeErr, &se) {
		return
	}
	// After Close, the reset still applies if the FIN is not
	// acknowledged yet; the core ignores it otherwise.
	_ = c.core.ResetStream(s.id, uint64(code))
	s.writeErr = &StreamError{StreamID: StreamID(s.id), ErrorCode: code}
	s.writable.fire()
	s.maybeForgetLocked()
	c.signal()
}

// cancelRead asks the peer to stop sending (STOP_SENDING) and discards
// what arrives.
func (s *streamState) cancelRead(code StreamErrorCode) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.readErr != nil {
		return
	}
	now := c.t.now()
	_ = c.core.StopSending(now, s.id, uint64(code))
	// When everything already arrived, STOP_SENDING is pointless and the
	// core sends none; reading the rest away ends the receiving part, so
	// that the core can forget the stream and let the peer open another.
	// The core discards what a stopped stream held, so the first read
	// ends it and the scratch is small: zeroing a large one cost every
	// request a server answered without reading its body.
	var scratch [64]byte
	for {
		n, err := c.core.StreamRead(now, s.id, scratch[:])
		if n == 0 || err != nil {
			break
		}
	}
	s.readErr = &StreamError{StreamID: StreamID(s.id), ErrorCode: code}
	s.readable.fire()
	s.maybeForgetLocked()
	// The goroutine wakes only for a frame to send: STOP_SENDING, or
	// the MAX_STREAMS that the forgotten stream may have made due.
	if c.core.CreditPending() {
		c.signal()
	}
}
