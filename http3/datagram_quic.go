package http3

import (
	"context"

	"github.com/satquic/satquic/quic"
)

// datagramConn is what HTTP datagrams need of a QUIC connection: the
// DATAGRAM frames of RFC 9221, sent and received whole.
type datagramConn interface {
	SendDatagram(b []byte) error
	ReceiveDatagram(ctx context.Context) ([]byte, error)
}

// batchDatagramConn is a datagramConn that also queues several datagrams
// in one call (quic.Conn.SendDatagrams): how many it queued, and the
// refusal of the next.
type batchDatagramConn interface {
	SendDatagrams(bs [][]byte) (int, error)
}

// sizedDatagramConn is a datagramConn that tells the largest datagram it
// takes now (quic.Conn.MaxDatagramPayloadSize), which follows the path's
// MTU.
type sizedDatagramConn interface {
	MaxDatagramPayloadSize() int
}

// quicDatagrams returns qc's DATAGRAM frames.
func quicDatagrams(qc *quic.Conn) datagramConn { return qc }

// quicDatagramsSupported reports whether both ends of qc offered QUIC
// DATAGRAM frames (RFC 9221 section 3: each sent max_datagram_frame_size),
// which RFC 9297 section 2.1.1 requires before HTTP/3 datagrams are
// allowed.
func quicDatagramsSupported(qc *quic.Conn) bool {
	return qc.ConnectionState().SupportsDatagrams
}

// datagramSource is where a connection's HTTP datagrams travel: the QUIC
// connection's DATAGRAM frames by default; tests give an in-memory pair.
type datagramSource func(qc *quic.Conn) (dc datagramConn, negotiated func() bool)

// quicDatagramSource is the default datagramSource.
func quicDatagramSource(qc *quic.Conn) (datagramConn, func() bool) {
	return quicDatagrams(qc), func() bool { return quicDatagramsSupported(qc) }
}
