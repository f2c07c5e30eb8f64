package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// serveHQ serves the hq-interop requests of one connection until it
// closes or shutdown drains it. hq-interop has no GOAWAY: draining means
// taking no new streams, letting the requests under way finish, and
// closing once their data is delivered.
func (s *fileServer) serveHQ(c *quic.Conn) {
	srv := &hq.Server{Root: s.root}
	if s.logf != nil {
		remote := c.RemoteAddr().String()
		srv.Log = func(format string, args ...any) {
			s.logf("%s hq-interop %s", remote, fmt.Sprintf(format, args...))
		}
	}
	accept, cancel := context.WithCancel(c.Context())
	defer cancel()
	stop := context.AfterFunc(s.draining, cancel)
	defer stop()
	var streams sync.WaitGroup
	for {
		st, err := c.AcceptStream(accept)
		if err != nil {
			break
		}
		s.requests[protoHQ].Add(1)
		streams.Go(func() { srv.ServeStream(st) })
	}
	done := make(chan struct{})
	go func() {
		streams.Wait()
		close(done)
	}()
	select {
	case <-done:
		waitDelivered(c, s.kill)
	case <-s.kill:
	}
	_ = c.CloseWithError(0, "server shutting down")
	<-done
}

// waitDelivered waits until the peer acknowledged every byte the streams
// wrote and nothing was in flight for two round trips since (so that the
// peer's own acknowledgements of our last packets are settled), until the
// connection closes, or until kill is closed. Nothing in flight alone is
// not enough: a client that stops reading for a while leaves the rest of
// a response queued behind its flow control, with no packet in flight.
func waitDelivered(c *quic.Conn, kill <-chan struct{}) {
	var quiet time.Duration
	last := time.Now()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		st := c.Stats()
		now := time.Now()
		if st.BytesInFlight == 0 && st.StreamBytesUnacked == 0 {
			quiet += now.Sub(last)
		} else {
			quiet = 0
		}
		last = now
		if quiet >= max(2*st.SmoothedRTT, 20*time.Millisecond) {
			return
		}
		select {
		case <-c.Context().Done():
			return
		case <-kill:
			return
		case <-tick.C:
		}
	}
}
