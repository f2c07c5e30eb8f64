package http3

import (
	"context"
	"slices"

	"github.com/satquic/satquic/quic"
)

// fakeDatagrams is one end of an in-memory pair that carries datagrams
// as QUIC DATAGRAM frames would, so that HTTP datagrams are tested
// whatever the quic package offers. A datagram that finds the peer's
// queue full is dropped, as a network may.
type fakeDatagrams struct {
	in   chan []byte
	peer *fakeDatagrams
}

// newFakeDatagramPair returns two joined ends, each queueing up to four
// times a stream's queue, so that a test filling a stream's queue loses
// nothing before it.
func newFakeDatagramPair() (a, b *fakeDatagrams) {
	a = &fakeDatagrams{in: make(chan []byte, 4*datagramQueueLen)}
	b = &fakeDatagrams{in: make(chan []byte, 4*datagramQueueLen), peer: a}
	a.peer = b
	return a, b
}

func (f *fakeDatagrams) SendDatagram(b []byte) error {
	select {
	case f.peer.in <- slices.Clone(b):
	default:
	}
	return nil
}

func (f *fakeDatagrams) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	select {
	case b := <-f.in:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// source is a datagramSource that hands out f on any connection, as if
// QUIC DATAGRAM frames were negotiated.
func (f *fakeDatagrams) source(*quic.Conn) (datagramConn, func() bool) {
	return f, func() bool { return true }
}

// SendDatagrams sends bs one by one, as quic.Conn.SendDatagrams queues
// them.
func (f *fakeDatagrams) SendDatagrams(bs [][]byte) (int, error) {
	for _, b := range bs {
		_ = f.SendDatagram(b)
	}
	return len(bs), nil
}
