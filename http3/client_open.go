package http3

import (
	"context"

	"github.com/satquic/satquic/quic"
)

// openStream opens a request stream. When the server's stream limit is
// reached, the requests wait for its next MAX_STREAMS in OpenStreamSync,
// which keeps them in line and wakes as many as the credit lets open
// streams.
func (cc *clientConn) openStream(ctx context.Context) (*quic.Stream, error) {
	return cc.qc.OpenStreamSync(ctx)
}
