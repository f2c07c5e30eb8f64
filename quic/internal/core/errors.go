package core

import (
	"errors"
	"fmt"

	"github.com/satquic/satquic/quic/internal/wire"
)

// Errors of the connection API.
var (
	// ErrIdleTimeout: no packet arrived within the idle timeout (RFC 9000
	// section 10.1); the connection closed silently.
	ErrIdleTimeout = errors.New("quic: idle timeout")
	// ErrHandshakeTimeout: the handshake did not complete in time.
	ErrHandshakeTimeout = errors.New("quic: handshake timeout")
	// ErrStatelessReset: the peer reset the connection (RFC 9000 section
	// 10.3).
	ErrStatelessReset = errors.New("quic: stateless reset")
	// ErrClosed: the connection is closing or closed; the error of the
	// EventClosed event says why.
	ErrClosed = errors.New("quic: connection closed")
	// ErrStreamLimit: the peer's stream limit does not allow another
	// stream now; EventStreamsAvailable says when it does.
	ErrStreamLimit = errors.New("quic: peer's stream limit reached")
	// ErrUnknownStream: no such stream, or it is closed.
	ErrUnknownStream = errors.New("quic: unknown stream")
	// ErrStreamDirection: the operation does not suit the stream's
	// direction (writing to a receive-only stream, reading a send-only
	// one).
	ErrStreamDirection = errors.New("quic: wrong stream direction")
	// ErrWriteClosed: the stream's sending part was closed or reset.
	ErrWriteClosed = errors.New("quic: write on closed stream")
	// ErrHandshakeIncomplete: streams open once the handshake completed.
	ErrHandshakeIncomplete = errors.New("quic: handshake not complete")
)

// ConnError is the error a connection closed with: a transport error or an
// application error, sent by this endpoint or by the peer (RFC 9000 section
// 10.2).
type ConnError struct {
	// Application: an application protocol error code (CONNECTION_CLOSE
	// of type 0x1d); otherwise a transport error code (section 20.1).
	Application bool
	Code        uint64
	// FrameType is the type of the frame that triggered a transport
	// error, 0 when unknown.
	FrameType uint64
	Reason    string
	// Remote: the peer closed the connection.
	Remote bool
}

func (e *ConnError) Error() string {
	who := "local"
	if e.Remote {
		who = "remote"
	}
	if e.Application {
		return fmt.Sprintf("quic: %s application error 0x%x: %s", who, e.Code, e.Reason)
	}
	if e.FrameType != 0 {
		return fmt.Sprintf("quic: %s %s in frame 0x%x: %s", who, wire.TransportErrorName(e.Code), e.FrameType, e.Reason)
	}
	return fmt.Sprintf("quic: %s %s: %s", who, wire.TransportErrorName(e.Code), e.Reason)
}

// StreamError reports that a stream was reset (RESET_STREAM, RFC 9000
// section 19.4) or that the peer asked us to stop sending (STOP_SENDING,
// section 19.5), with the application's error code.
type StreamError struct {
	StreamID uint64
	Code     uint64
	// Remote: the peer reset the stream or sent STOP_SENDING.
	Remote bool
}

func (e *StreamError) Error() string {
	who := "local"
	if e.Remote {
		who = "remote"
	}
	return fmt.Sprintf("quic: stream %d reset by %s with code 0x%x", e.StreamID, who, e.Code)
}

// transportError builds a local transport error.
func transportError(code uint64, ft wire.FrameType, format string, args ...any) *wire.TransportError {
	return &wire.TransportError{Code: code, FrameType: uint64(ft), Reason: fmt.Sprintf(format, args...)}
}
