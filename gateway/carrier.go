package gateway

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// datagramOverhead is what an HTTP datagram of CONNECT-IP adds to an IP
// packet inside a QUIC DATAGRAM frame: the Quarter Stream ID (RFC 9297
// section 2.1), a varint of at most 4 bytes for any of the first 2^30
// request streams, and the Context ID 0 (RFC 9484 section 6), one byte.
const datagramOverhead = 4 + 1

// minTunnelMTU is the smallest inner MTU a tunnel runs with: IPv6's
// minimum link MTU (RFC 8200 section 5), which RFC 9484 section 7.2 asks
// an IPv6 tunnel to carry or to fail.
const minTunnelMTU = 1280

// innerMTU is the largest IP packet an HTTP datagram carries when a QUIC
// DATAGRAM frame takes payloads of up to maxPayload bytes.
func innerMTU(maxPayload int) int { return max(maxPayload-datagramOverhead, 0) }

// carrier is the connectip.Carrier over an HTTP/3 request stream. It
// differs from the stream in one way: a datagram larger than the QUIC
// packet carries now is dropped and counted instead of failing, since
// connectip ends a session on a send error, and a path MTU that shrank
// (a black hole, RFC 8899 section 4.3) should cost a packet, not the
// tunnel.
type carrier struct {
	*http3.Stream
	tooLarge *atomic.Uint64
}

var _ connectip.Carrier = carrier{}

func (c carrier) SendDatagram(b []byte) error {
	err := c.Stream.SendDatagram(b)
	var tooLarge *quic.DatagramTooLargeError
	if errors.As(err, &tooLarge) {
		c.tooLarge.Add(1)
		return nil
	}
	return err
}

// SendDatagrams sends bs in order through the stream in one call where it
// can, dropping and counting those too large for the QUIC packet as
// SendDatagram does.
func (c carrier) SendDatagrams(bs [][]byte) (int, error) {
	return c.sendSkippingTooLarge(bs, c.Stream.SendDatagrams)
}

// SendDatagramsWait is SendDatagrams waiting for room in the QUIC
// connection's send queue until ctx ends (http3.Stream.SendDatagramsWait).
func (c carrier) SendDatagramsWait(ctx context.Context, bs [][]byte) (int, error) {
	return c.sendSkippingTooLarge(bs, func(bs [][]byte) (int, error) { return c.Stream.SendDatagramsWait(ctx, bs) })
}

// SendPrefixedDatagrams sends bs, each after prefix, through the stream
// in one call, dropping and counting those too large for the QUIC packet
// as SendDatagram does.
func (c carrier) SendPrefixedDatagrams(prefix []byte, bs [][]byte) (int, error) {
	return c.sendSkippingTooLarge(bs, func(bs [][]byte) (int, error) { return c.Stream.SendPrefixedDatagrams(prefix, bs) })
}

// SendPrefixedDatagramsWait is SendPrefixedDatagrams waiting for room in
// the QUIC connection's send queue until ctx ends.
func (c carrier) SendPrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error) {
	return c.sendSkippingTooLarge(bs, func(bs [][]byte) (int, error) { return c.Stream.SendPrefixedDatagramsWait(ctx, prefix, bs) })
}

// sendSkippingTooLarge sends bs with send, and drops and counts each
// datagram send refuses as too large, going on with the rest.
func (c carrier) sendSkippingTooLarge(bs [][]byte, send func([][]byte) (int, error)) (int, error) {
	sent := 0
	for len(bs) > 0 {
		n, err := send(bs)
		sent += n
		var tooLarge *quic.DatagramTooLargeError
		if errors.As(err, &tooLarge) {
			c.tooLarge.Add(1)
			sent++ // dropped, as a packet the path no longer carries
			bs = bs[n+1:]
			continue
		}
		if err != nil {
			return sent, err
		}
		break
	}
	return sent, nil
}
