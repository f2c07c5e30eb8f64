package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// limitStats are the counters of serve's limits at one time: the
// Listener's (handshakes and connections) and the HTTP/3 server's
// (streams and request data).
type limitStats struct {
	quic quic.ListenerStats
	h3   http3.ServerStats
}

func readLimitStats(l *quic.Listener, s *http3.Server) limitStats {
	return limitStats{quic: l.Stats(), h3: s.Stats()}
}

// changed reports whether a counter moved between a and b; what is held
// now (connections, buffered bytes) is no counter.
func (a limitStats) changed(b limitStats) bool {
	a.h3.RequestMemory, a.h3.ReadingHeaders = b.h3.RequestMemory, b.h3.ReadingHeaders
	a.quic.Handshakes, a.quic.Established, a.quic.AcceptQueue = b.quic.Handshakes, b.quic.Established, b.quic.AcceptQueue
	return a != b
}

// listenerLine says what the Listener's limits refused and evicted, and
// how many Retry packets it sent.
func listenerLine(st quic.ListenerStats) string {
	r, e := st.Refused, st.Evicted
	return fmt.Sprintf("quic limits: %d clients refused (%d at --max-handshakes, %d at --max-handshakes-per-ip, %d at --max-conns, "+
		"%d at --max-conns-per-ip, %d waiting to be accepted), %d connections evicted (%d silent handshakes, %d busy handshakes, "+
		"%d idle connections), %d Retry packets sent, %d invalid tokens",
		r.Total(), r.Handshakes, r.HandshakesPerIP, r.Connections, r.ConnectionsPerIP, r.AcceptQueue,
		e.Total(), e.SilentHandshakes, e.BusyHandshakes, e.IdleConnections, st.RetriesSent, st.InvalidTokens)
}

// heldLine says what the server holds now.
func heldLine(st limitStats) string {
	return fmt.Sprintf("%d handshakes and %d connections held, %d bytes of requests buffered, %d headers being read",
		st.quic.Handshakes, st.quic.Established, st.h3.RequestMemory, st.h3.ReadingHeaders)
}

// logLimits writes the lines of the limits on w, with what the server
// holds, every period in which a counter moved (every period when
// verbose), until ctx ends; the returned function waits for it to stop.
func logLimits(ctx context.Context, read func() limitStats, w io.Writer, period time.Duration, verbose bool) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		last := read()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			st := read()
			if verbose || st.changed(last) {
				stamp := time.Now().Format("15:04:05.000")
				fmt.Fprintf(w, "%s satquic serve: %s; %s\n%s satquic serve: %s; %s\n",
					stamp, listenerLine(st.quic), heldLine(st), stamp, limitsLine(st.h3), heldLine(st))
			}
			last = st
		}
	})
	return wg.Wait
}
