package connectip

import (
	"context"
	"io"
)

// Carrier is what a CONNECT-IP session runs over: the request stream of an
// extended CONNECT whose capsule protocol is on (Read, Write and Close
// carry the capsule byte stream, RFC 9297 section 3.2), and the HTTP
// Datagrams bound to that stream (RFC 9297 section 2). An HTTP/3 request
// stream with datagrams satisfies it.
//
// SendDatagram must not keep b after it returns. ReceiveDatagram returns
// one datagram payload, blocking until one arrives, ctx is done or the
// carrier is closed. Close ends the stream and unblocks Read and
// ReceiveDatagram. A carrier that also copies datagrams out into the
// reader's buffer, ReadDatagram(ctx, b) and TryReadDatagram(b) as
// http3.Stream has them, is read through those, so that its buffers are
// reused rather than one allocated per datagram.
type Carrier interface {
	io.Reader
	io.Writer
	io.Closer
	SendDatagram(b []byte) error
	ReceiveDatagram(ctx context.Context) ([]byte, error)
}
