package http3

import (
	"context"

	"github.com/satquic/satquic/quic"
)

// givingDatagramConn is a datagramConn that takes the buffers of a batch
// into its send queue rather than copy them, and hands back buffers of
// its own in exchange (quic.Conn.GivePrefixedDatagrams).
type givingDatagramConn interface {
	GivePrefixedDatagrams(prefix []byte, bs [][]byte) (int, error)
	GivePrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error)
}

// GivePrefixedDatagrams is SendPrefixedDatagrams that hands the buffers
// of bs to the QUIC connection where it takes them: each bs[i] queued
// then holds, in exchange, an empty buffer the connection no longer uses,
// or nil. Whatever bs holds on return is the caller's. Over a connection
// that cannot take them it is SendPrefixedDatagrams, and bs is unchanged.
func (s *Stream) GivePrefixedDatagrams(prefix []byte, bs [][]byte) (int, error) {
	return s.giveDatagrams(context.Background(), prefix, bs, false)
}

// GivePrefixedDatagramsWait is GivePrefixedDatagrams that waits for room
// as SendDatagramsWait does.
func (s *Stream) GivePrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error) {
	return s.giveDatagrams(ctx, prefix, bs, true)
}

// giveDatagrams is sendDatagrams handing the buffers over where the
// connection takes them.
func (s *Stream) giveDatagrams(ctx context.Context, inner []byte, bs [][]byte, wait bool) (int, error) {
	var gc givingDatagramConn
	if s.c.datagrams != nil {
		gc, _ = s.c.datagrams.dc.(givingDatagramConn)
	}
	if gc == nil {
		return s.sendDatagrams(ctx, inner, bs, wait)
	}
	if p, ok := s.c.peerSettings(); !ok || !p.h3Datagram {
		return 0, ErrPeerDatagramsDisabled
	}
	if s.ctx.Err() != nil {
		return 0, context.Cause(s.ctx)
	}
	// The Quarter Stream ID (RFC 9297 section 2.1), then inner.
	prefix := append(appendVarint(make([]byte, 0, 8+len(inner)), uint64(s.st.StreamID())/4), inner...)
	if wait {
		return gc.GivePrefixedDatagramsWait(ctx, prefix, bs)
	}
	return gc.GivePrefixedDatagrams(prefix, bs)
}

// A QUIC connection takes the buffers of the datagrams it queues.
var _ givingDatagramConn = (*quic.Conn)(nil)
