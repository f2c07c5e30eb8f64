package http3

import (
	"context"
	"errors"

	"github.com/satquic/satquic/quic"
)

// openStream opens a request stream. When the server's stream limit is
// reached, the requests wait for its next MAX_STREAMS in line, one at a
// time in OpenStreamSync: the quic package wakes every goroutine waiting
// there at each credit, and with a hundred requests waiting (a client
// that has more under way than the server allows) those wake-ups, nearly
// all in vain, cost more CPU than the requests.
func (cc *clientConn) openStream(ctx context.Context) (*quic.Stream, error) {
	st, err := cc.qc.OpenStream()
	if !errors.Is(err, quic.ErrStreamLimit) {
		return st, err
	}
	select {
	case cc.opening <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-cc.opening }()
	return cc.qc.OpenStreamSync(ctx)
}
