package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// fileServer hands each connection of serve's Listener to the server of
// the protocol its handshake chose, and drains them all at shutdown.
type fileServer struct {
	root *os.Root
	// logf, when -v asked for it, receives one line per request.
	logf func(format string, args ...any)
	h3   *http3.Server
	// sockets, if set, reads the counters of the Transport's sockets.
	sockets func() []quic.SocketStats

	// draining ends when shutdown begins: hq-interop connections take
	// no more requests.
	draining context.Context
	drain    context.CancelFunc
	// kill is closed when the shutdown timeout passed: hq-interop
	// connections close, finished or not.
	kill     chan struct{}
	killOnce sync.Once
	hqConns  sync.WaitGroup

	conns    [2]atomic.Int64 // per protocol: h3, hq-interop
	requests [2]atomic.Int64
}

// Indexes of fileServer's counters.
const (
	protoH3 = iota
	protoHQ
)

func newFileServer(root *os.Root, stderr io.Writer, verbose bool) *fileServer {
	s := &fileServer{root: root, kill: make(chan struct{})}
	s.draining, s.drain = context.WithCancel(context.Background())
	if verbose {
		var mu sync.Mutex
		s.logf = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, "%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
		}
	}
	s.h3 = &http3.Server{
		Handler:  fileHandler(root, &s.requests[protoH3], s.logf),
		ErrorLog: log.New(stderr, "satquic serve: ", log.LstdFlags),
	}
	return s
}

// acceptLoop serves the Listener's connections until ctx ends.
func (s *fileServer) acceptLoop(ctx context.Context, l *quic.Listener) error {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, quic.ErrServerClosed) {
				return nil
			}
			return fmt.Errorf("accepting connections: %w", err)
		}
		switch proto := c.ConnectionState().TLS.NegotiatedProtocol; proto {
		case http3.NextProtoH3:
			s.conns[protoH3].Add(1)
			s.h3.ServeConn(c)
		case hq.ALPN:
			s.conns[protoHQ].Add(1)
			s.hqConns.Go(func() { s.serveHQ(c) })
		default:
			// TLS refuses a client without a protocol in common, so
			// this is a client that offered none the server knows.
			_ = c.CloseWithError(0, "no application protocol")
		}
	}
}

// shutdown drains the connections: HTTP/3 clients get a GOAWAY and
// hq-interop connections stop taking requests; the requests under way
// have up to timeout to finish before their connections close.
func (s *fileServer) shutdown(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { s.killOnce.Do(func() { close(s.kill) }) })
	defer stop()
	s.drain()
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.h3.Shutdown(ctx) })
	s.hqConns.Wait()
	wg.Wait()
}

// counters is the line serve prints when it stops.
func (s *fileServer) counters() string {
	return fmt.Sprintf("served %d connections (h3 %d, hq-interop %d), %d requests (h3 %d, hq-interop %d)",
		s.conns[protoH3].Load()+s.conns[protoHQ].Load(), s.conns[protoH3].Load(), s.conns[protoHQ].Load(),
		s.requests[protoH3].Load()+s.requests[protoHQ].Load(), s.requests[protoH3].Load(), s.requests[protoHQ].Load())
}
