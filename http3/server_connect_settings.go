package http3

import (
	"context"
	"time"
)

// connectSettingsWait bounds how long an extended CONNECT waits for the
// client's SETTINGS before its handler runs.
const connectSettingsWait = 5 * time.Second

// awaitPeerSettings holds an extended CONNECT until the client's
// SETTINGS arrived, so that its handler may send HTTP datagrams at once:
// RFC 9297 section 2.1.1 allows none before SETTINGS_H3_DATAGRAM is
// received, and the client's control stream, though opened first, may
// still be in flight beside the request (QUIC does not order streams).
// A CONNECT-IP proxy that forwarded a packet for its new client in that
// gap found the client's datagrams refused and took the tunnel for
// ended. A client that sends no SETTINGS within connectSettingsWait, or
// whose request ends first, gets its handler without them; its datagrams
// are then refused with ErrPeerDatagramsDisabled, as before. Only a
// server that enabled HTTP datagrams waits.
func (sc *serverConn) awaitPeerSettings(ctx context.Context) {
	if !sc.local.h3Datagram {
		return
	}
	if _, ok := sc.peerSettings(); ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, connectSettingsWait)
	defer cancel()
	_, _ = sc.waitSettings(ctx)
}
