package quic

import (
	"errors"
	"fmt"
	"net"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/wire"
)

// StreamID is a stream's identifier (RFC 9000 section 2.1): its two low
// bits say who opened it and whether it is unidirectional.
type StreamID int64

// ApplicationErrorCode is the error code of an application's
// CONNECTION_CLOSE (RFC 9000 section 20.2).
type ApplicationErrorCode uint64

// StreamErrorCode is the error code of RESET_STREAM and STOP_SENDING.
type StreamErrorCode uint64

// TransportErrorCode is a QUIC transport error code (RFC 9000 section
// 20.1); a TLS alert maps to 0x0100 plus the alert.
type TransportErrorCode uint64

// String names the code as RFC 9000 does, for example
// "FLOW_CONTROL_ERROR".
func (c TransportErrorCode) String() string { return wire.TransportErrorName(uint64(c)) }

var (
	// ErrTransportClosed: the Transport was closed; its connections closed
	// with it.
	ErrTransportClosed = errors.New("quic: transport closed")
	// ErrServerClosed: the Listener was closed.
	ErrServerClosed = errors.New("quic: server closed")
	// ErrStreamLimit: the peer's stream limit allows no other stream now;
	// OpenStreamSync waits until it does.
	ErrStreamLimit = errors.New("quic: peer's stream limit reached")
	// ErrWriteClosed: a write after Close or CancelWrite.
	ErrWriteClosed = errors.New("quic: write on closed stream")
)

// ApplicationError is a connection closed by an application: this one
// (CloseWithError) or the peer's (Remote).
type ApplicationError struct {
	Remote       bool
	ErrorCode    ApplicationErrorCode
	ErrorMessage string
}

func (e *ApplicationError) Error() string {
	who := "local"
	if e.Remote {
		who = "remote"
	}
	if e.ErrorMessage == "" {
		return fmt.Sprintf("quic: %s application error 0x%x", who, uint64(e.ErrorCode))
	}
	return fmt.Sprintf("quic: %s application error 0x%x: %s", who, uint64(e.ErrorCode), e.ErrorMessage)
}

// TransportError is a connection closed for a protocol error, found by
// this endpoint or by the peer (Remote). A failed TLS handshake is one,
// with a code of 0x0100 plus the TLS alert.
type TransportError struct {
	Remote       bool
	ErrorCode    TransportErrorCode
	FrameType    uint64
	ErrorMessage string
}

func (e *TransportError) Error() string {
	who := "local"
	if e.Remote {
		who = "remote"
	}
	s := fmt.Sprintf("quic: %s %s", who, e.ErrorCode)
	if e.FrameType != 0 {
		s += fmt.Sprintf(" in frame 0x%x", e.FrameType)
	}
	if e.ErrorMessage != "" {
		s += ": " + e.ErrorMessage
	}
	return s
}

// StreamError reports a stream reset (RESET_STREAM) or a request to stop
// sending (STOP_SENDING), by the peer (Remote) or by this endpoint
// (CancelRead, CancelWrite).
type StreamError struct {
	StreamID  StreamID
	ErrorCode StreamErrorCode
	Remote    bool
}

func (e *StreamError) Error() string {
	who := "local"
	if e.Remote {
		who = "remote"
	}
	return fmt.Sprintf("quic: stream %d canceled by %s with error code 0x%x", e.StreamID, who, uint64(e.ErrorCode))
}

// IdleTimeoutError: nothing arrived within the idle timeout (RFC 9000
// section 10.1). It is a net.Error whose Timeout is true.
type IdleTimeoutError struct{}

func (*IdleTimeoutError) Error() string   { return "quic: idle timeout: no recent network activity" }
func (*IdleTimeoutError) Timeout() bool   { return true }
func (*IdleTimeoutError) Temporary() bool { return false }

// HandshakeTimeoutError: the handshake did not complete within
// Config.HandshakeTimeout. It is a net.Error whose Timeout is true.
type HandshakeTimeoutError struct{}

func (*HandshakeTimeoutError) Error() string   { return "quic: handshake did not complete in time" }
func (*HandshakeTimeoutError) Timeout() bool   { return true }
func (*HandshakeTimeoutError) Temporary() bool { return false }

// StatelessResetError: the peer reset the connection, having lost its
// state (RFC 9000 section 10.3).
type StatelessResetError struct{}

func (*StatelessResetError) Error() string { return "quic: received a stateless reset" }

// The timeouts are net.Errors, as a net.Conn's are.
var (
	_ net.Error = (*IdleTimeoutError)(nil)
	_ net.Error = (*HandshakeTimeoutError)(nil)
)

// connError converts the reason a core connection closed.
func connError(err error) error {
	var ce *core.ConnError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce) && ce.Application:
		return &ApplicationError{Remote: ce.Remote, ErrorCode: ApplicationErrorCode(ce.Code), ErrorMessage: ce.Reason}
	case errors.As(err, &ce):
		return &TransportError{Remote: ce.Remote, ErrorCode: TransportErrorCode(ce.Code), FrameType: ce.FrameType, ErrorMessage: ce.Reason}
	case errors.Is(err, core.ErrIdleTimeout):
		return &IdleTimeoutError{}
	case errors.Is(err, core.ErrHandshakeTimeout):
		return &HandshakeTimeoutError{}
	case errors.Is(err, core.ErrStatelessReset):
		return &StatelessResetError{}
	}
	return err
}

// streamError converts a core stream error, and the core's ErrWriteClosed
// to the package's; other errors pass unchanged.
func streamError(err error) error {
	var se *core.StreamError
	if errors.As(err, &se) {
		return &StreamError{StreamID: StreamID(se.StreamID), ErrorCode: StreamErrorCode(se.Code), Remote: se.Remote}
	}
	if errors.Is(err, core.ErrWriteClosed) {
		// The package's own value, so that errors.Is(err,
		// ErrWriteClosed) holds for the caller.
		return ErrWriteClosed
	}
	return err
}
