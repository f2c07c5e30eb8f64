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
const datagramOverhead = 4 + contextIDLen

// contextIDLen is the length of Context ID 0 before each IP packet.
const contextIDLen = 1

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
// tunnel. From then on, until the path carries the tunnel's MTU again, it
// tells the session the smaller size (PacketLimit), so that senders get
// ICMP Packet Too Big instead of losing packets in silence.
type carrier struct {
	*http3.Stream
	tooLarge *atomic.Uint64
	// mtu is the session's MTU, shrunk set once a datagram was too large.
	mtu    int
	shrunk *atomic.Bool
}

var (
	_ connectip.Carrier     = carrier{}
	_ connectip.PathLimiter = carrier{}
)

// newCarrier returns the carrier over st for a session of MTU mtu,
// counting the packets it drops in tooLarge.
func newCarrier(st *http3.Stream, tooLarge *atomic.Uint64, mtu int) carrier {
	return carrier{Stream: st, tooLarge: tooLarge, mtu: mtu, shrunk: new(atomic.Bool)}
}

func (c carrier) SendDatagram(b []byte) error {
	err := c.Stream.SendDatagram(b)
	var tooLarge *quic.DatagramTooLargeError
	if errors.As(err, &tooLarge) {
		c.dropTooLarge()
		return nil
	}
	return err
}

// dropTooLarge counts a packet the path no longer carries, and has the
// session check the path's size from now on.
func (c carrier) dropTooLarge() {
	c.tooLarge.Add(1)
	c.shrunk.Store(true)
}

// PacketLimit is the largest IP packet the path carries now while that is
// less than the session's MTU, 0 otherwise. It asks the connection only
// after a packet was too large, and stops when the path is back to the
// MTU: path MTU discovery searches again after a black hole (RFC 8899
// section 5.2).
func (c carrier) PacketLimit() int {
	if !c.shrunk.Load() {
		return 0
	}
	n := c.Stream.MaxDatagramPayloadSize() - contextIDLen
	if n <= 0 {
		return 0 // no datagrams now: sending fails on its own
	}
	if n >= c.mtu {
		c.shrunk.Store(false)
		return 0
	}
	return n
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

// GivePrefixedDatagrams is SendPrefixedDatagrams handing the buffers of
// bs to the QUIC connection (http3.Stream.GivePrefixedDatagrams); a
// datagram too large for the QUIC packet stays in its slot, dropped and
// counted.
func (c carrier) GivePrefixedDatagrams(prefix []byte, bs [][]byte) (int, error) {
	return c.sendSkippingTooLarge(bs, func(bs [][]byte) (int, error) { return c.Stream.GivePrefixedDatagrams(prefix, bs) })
}

// GivePrefixedDatagramsWait is GivePrefixedDatagrams waiting for room in
// the QUIC connection's send queue until ctx ends.
func (c carrier) GivePrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error) {
	return c.sendSkippingTooLarge(bs, func(bs [][]byte) (int, error) { return c.Stream.GivePrefixedDatagramsWait(ctx, prefix, bs) })
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
			c.dropTooLarge()
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
