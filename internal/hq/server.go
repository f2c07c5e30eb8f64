package hq

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/satquic/satquic/quic"
)

// copyBuffer is the size of the reads from a served file.
const copyBuffer = 256 << 10

// Server serves the regular files under a directory.
type Server struct {
	// Root confines every path to the served directory.
	Root *os.Root
	// Log, if set, receives one line per request.
	Log func(format string, args ...any)
}

// Serve accepts connections until ctx ends or the Listener closes, and
// serves every stream of every connection. It returns when all its
// goroutines are done.
func (s *Server) Serve(ctx context.Context, l *quic.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			if errors.Is(err, quic.ErrServerClosed) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Go(func() { s.ServeConn(ctx, c) })
	}
}

// ServeConn serves the streams of one connection until it closes. When ctx
// ends, the connection is closed.
func (s *Server) ServeConn(ctx context.Context, c *quic.Conn) {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { _ = c.CloseWithError(0, "server shutting down") })
	defer stop()
	for {
		st, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		wg.Go(func() { s.ServeStream(st) })
	}
}

// ServeStream answers one request.
func (s *Server) ServeStream(st *quic.Stream) {
	p, err := ReadRequest(st)
	if err != nil {
		s.logf("stream %d: %v", st.StreamID(), err)
		st.CancelRead(CodeBadRequest)
		st.CancelWrite(CodeBadRequest)
		return
	}
	// Nothing follows the request line. Reading is over, whether or not
	// the client's FIN came yet: a stream whose receiving part never
	// ends would keep its place under the stream limit forever.
	st.CancelRead(0)
	f, err := s.open(p)
	if err != nil {
		// Missing, outside the root, unreadable or not a regular file:
		// all look the same from outside, so that the answer reveals
		// nothing about what lies beyond the served files.
		s.logf("GET %s: %v", p, err)
		st.CancelWrite(CodeNotFound)
		return
	}
	defer f.Close()
	n, err := io.CopyBuffer(st, onlyReader{f}, make([]byte, copyBuffer))
	if err != nil {
		s.logf("GET %s: after %d bytes: %v", p, n, err)
		st.CancelWrite(CodeInternal)
		return
	}
	_ = st.Close()
	s.logf("GET %s: %d bytes", p, n)
}

// open opens a regular file by its request path (OpenServed).
func (s *Server) open(p string) (*os.File, error) {
	f, _, err := OpenServed(s.Root, p, false)
	return f, err
}

func (s *Server) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}

// onlyReader hides the file's WriterTo, so that io.CopyBuffer uses the
// large buffer it is given.
type onlyReader struct{ io.Reader }
