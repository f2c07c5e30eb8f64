package load

import (
	"context"
	"errors"
	"net"
	"strconv"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// The kinds of failure a run counts. HTTP statuses outside 2xx count as
// "status_NNN", one kind per status.
const (
	// KindConnect: the connection could not be made (UDP, QUIC or TLS
	// handshake, including a handshake that timed out).
	KindConnect = "connect"
	// KindTimeout: the request did not end within Options.Timeout, or
	// its connection went idle past the idle timeout.
	KindTimeout = "timeout"
	// KindStreamReset: the server reset the request's stream, or
	// stopped reading it.
	KindStreamReset = "stream_reset"
	// KindConnClosed: the connection closed under the request (an
	// HTTP/3 or QUIC connection error, a stateless reset).
	KindConnClosed = "connection_closed"
	// KindBodyMismatch: the body was not as long as its Content-Length
	// said, or not the expected bytes.
	KindBodyMismatch = "body_mismatch"
	// KindOther: anything else.
	KindOther = "other"
)

// connectionRefused is the QUIC transport error CONNECTION_REFUSED (RFC
// 9000 section 20.1).
const connectionRefused quic.TransportErrorCode = 0x02

// statusKind names an HTTP status failure.
func statusKind(code int) string { return "status_" + strconv.Itoa(code) }

// errRequestTimeout is the cause of a request's context when its own
// timeout ends it (as opposed to the end of the run).
var errRequestTimeout = errors.New("load: request timeout")

// connectError marks a failure of the dial, which the Transport returns
// unchanged to the request that waited for it.
type connectError struct{ err error }

func (e *connectError) Error() string { return e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// errBodyMismatch is the error of a body that is not what was expected.
type errBodyMismatch struct{ msg string }

func (e *errBodyMismatch) Error() string { return "body mismatch: " + e.msg }

// classify names the kind of a request's failure. ctx is the request's
// context, whose cause tells a request timeout apart.
func classify(ctx context.Context, err error) string {
	var ce *connectError
	var te *quic.TransportError
	var bm *errBodyMismatch
	var h3 *http3.Error
	var se *quic.StreamError
	var ne net.Error
	var st *errStatus
	switch {
	case errors.As(err, &st):
		return statusKind(st.code)
	case errors.As(err, &ce):
		return KindConnect
	case errors.As(err, &te) && te.ErrorCode == connectionRefused:
		// A server that refuses a connection may do so after the
		// client's side of the handshake completed.
		return KindConnect
	case errors.As(err, &bm):
		return KindBodyMismatch
	case context.Cause(ctx) == errRequestTimeout, errors.Is(err, errRequestTimeout):
		return KindTimeout
	case errors.As(err, &ne) && ne.Timeout():
		// quic.IdleTimeoutError, a deadline.
		return KindTimeout
	case errors.As(err, &h3):
		if !h3.Remote && !h3.Connection && h3.Code == http3.ErrCodeMessageError {
			// This end found the response malformed: in a load test,
			// a body longer or shorter than its content-length
			// (RFC 9114 section 4.1.2).
			return KindBodyMismatch
		}
		if h3.Connection {
			return KindConnClosed
		}
		return KindStreamReset
	case errors.As(err, &se):
		return KindStreamReset
	}
	var ae *quic.ApplicationError
	var sr *quic.StatelessResetError
	if errors.As(err, &ae) || errors.As(err, &te) || errors.As(err, &sr) || errors.Is(err, quic.ErrTransportClosed) {
		return KindConnClosed
	}
	return KindOther
}
