package quic

import (
	"io"
	"time"
)

// Stream is a bidirectional stream: an io.Reader, and an io.Writer whose
// Close ends the sending direction (a FIN) while reading goes on. Read and
// Write may be called from two goroutines at once; two concurrent Reads
// (or Writes) interleave unpredictably, as on any stream.
//
// Read returns io.EOF after the peer's FIN and a *StreamError after its
// RESET_STREAM; Write returns a *StreamError after its STOP_SENDING. Once
// the connection closed, both return the connection's error (Read still
// returns data that arrived before).
type Stream struct{ s *streamState }

// ReceiveStream is the receiving direction of a stream: a unidirectional
// stream the peer opened.
type ReceiveStream struct{ s *streamState }

// SendStream is the sending direction of a stream: a unidirectional
// stream this endpoint opened.
type SendStream struct{ s *streamState }

var (
	_ io.ReadWriteCloser = (*Stream)(nil)
	_ io.Reader          = (*ReceiveStream)(nil)
	_ io.WriteCloser     = (*SendStream)(nil)
)

// StreamID is the stream's ID.
func (s *Stream) StreamID() StreamID { return StreamID(s.s.id) }

// Read reads data the peer sent, blocking until some is there.
func (s *Stream) Read(p []byte) (int, error) { return s.s.read(p) }

// Write queues p for sending, blocking while the send buffer is full.
func (s *Stream) Write(p []byte) (int, error) { return s.s.write(p) }

// Close ends the sending direction: the peer reads io.EOF after the data
// written. It does not wait for delivery. Use CancelRead to stop
// receiving too.
func (s *Stream) Close() error { return s.s.closeWrite() }

// WriteClose is Write followed by Close, done together once the last of p
// is buffered: the data and the FIN leave in one STREAM frame, and the
// connection is woken once rather than twice. A failed or cut-short
// write does not close the stream.
func (s *Stream) WriteClose(p []byte) (int, error) { return s.s.writeClose(p) }

// CancelWrite abandons the sending direction with an error code
// (RESET_STREAM): data not delivered yet is not sent again.
func (s *Stream) CancelWrite(code StreamErrorCode) { s.s.cancelWrite(code) }

// CancelRead asks the peer to stop sending, with an error code
// (STOP_SENDING); data arriving meanwhile is discarded.
func (s *Stream) CancelRead(code StreamErrorCode) { s.s.cancelRead(code) }

// SetReadDeadline makes a Read waiting after t fail with an error for which
// errors.Is(err, os.ErrDeadlineExceeded) holds; zero means no deadline. It
// applies to a Read already waiting.
func (s *Stream) SetReadDeadline(t time.Time) error { s.s.setReadDeadline(t); return nil }

// SetWriteDeadline does the same for Write.
func (s *Stream) SetWriteDeadline(t time.Time) error { s.s.setWriteDeadline(t); return nil }

// SetDeadline sets both deadlines.
func (s *Stream) SetDeadline(t time.Time) error {
	s.s.setReadDeadline(t)
	s.s.setWriteDeadline(t)
	return nil
}

// StreamID is the stream's ID.
func (s *ReceiveStream) StreamID() StreamID { return StreamID(s.s.id) }

// Read reads data the peer sent, blocking until some is there.
func (s *ReceiveStream) Read(p []byte) (int, error) { return s.s.read(p) }

// CancelRead asks the peer to stop sending (STOP_SENDING).
func (s *ReceiveStream) CancelRead(code StreamErrorCode) { s.s.cancelRead(code) }

// SetReadDeadline sets the deadline of Read.
func (s *ReceiveStream) SetReadDeadline(t time.Time) error { s.s.setReadDeadline(t); return nil }

// StreamID is the stream's ID.
func (s *SendStream) StreamID() StreamID { return StreamID(s.s.id) }

// Write queues p for sending, blocking while the send buffer is full.
func (s *SendStream) Write(p []byte) (int, error) { return s.s.write(p) }

// Close ends the stream with a FIN after the data written.
func (s *SendStream) Close() error { return s.s.closeWrite() }

// CancelWrite abandons the stream with an error code (RESET_STREAM).
func (s *SendStream) CancelWrite(code StreamErrorCode) { s.s.cancelWrite(code) }

// SetWriteDeadline sets the deadline of Write.
func (s *SendStream) SetWriteDeadline(t time.Time) error { s.s.setWriteDeadline(t); return nil }
