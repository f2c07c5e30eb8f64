package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/satquic/satquic/quic"
)

// The bulk stacks this package runs itself, as children of "satquic bench
// bulk" ("satquic bench bulk-peer"): satquic's QUIC and kernel TCP with Go's
// crypto/tls. quic-go's are internal/cmd/quicgo-peer's bulk-server and
// bulk-client.
const (
	BulkSatquic = "satquic"
	BulkQuicgo  = "quic-go"
	BulkTCPTLS  = "tcp-tls"
)

// BulkServerOptions configure a bulk server child.
type BulkServerOptions struct {
	// Stack is BulkSatquic or BulkTCPTLS.
	Stack string
	// Addr is where to listen, HOST:PORT.
	Addr string
	// Cert is the server's certificate.
	Cert tls.Certificate
	// Idle holds connections without serving them: the idle memory
	// measurement, where a goroutine per connection waiting for a
	// stream would be the harness's memory, not the stack's.
	Idle bool
}

// bulkIdleTimeout is both ends' idle timeout in the bulk experiment, long
// enough that the first of many idle connections outlives the opening
// of the last on a busy machine; the same for every QUIC stack.
const bulkIdleTimeout = 5 * time.Minute

// bulkSatquicServerConfig is satquic's default configuration, with room for
// the idle measurement's connections from one address (the defaults hold
// a single source to 512 connections, a guard against one client taking
// a server's places).
func bulkSatquicServerConfig() *quic.Config {
	return &quic.Config{
		MaxIdleTimeout:      bulkIdleTimeout,
		MaxConnections:      1 << 20,
		MaxConnectionsPerIP: 1 << 20,
		MaxHandshakesPerIP:  1 << 10,
	}
}

// ServeBulk runs a bulk server until stdin ends or ctx is done: it prints
// its address, then answers "mem" lines (package bulkproto).
func ServeBulk(ctx context.Context, o BulkServerOptions, stdin io.Reader, stdout io.Writer) error {
	out := &lockedWriter{W: stdout}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		srv bulkServer
		err error
	)
	switch o.Stack {
	case BulkSatquic:
		srv, err = listenSatquicBulk(o)
	case BulkTCPTLS:
		srv, err = listenTCPTLSBulk(o)
	default:
		return fmt.Errorf("bulk server: unknown stack %q (%s or %s)", o.Stack, BulkSatquic, BulkTCPTLS)
	}
	if err != nil {
		return fmt.Errorf("bulk server: %w", err)
	}
	out.Write(struct {
		Listening string `json:"listening"`
	}{srv.addr()})
	served := make(chan error, 1)
	go func() { served <- srv.serve(ctx) }()
	go func() {
		serveMemRequests(stdin, out, srv.conns)
		cancel()
	}()
	<-ctx.Done()
	cerr := srv.close()
	if err := <-served; err != nil {
		return errors.Join(err, cerr)
	}
	return cerr
}

// bulkServer is one stack's listening server.
type bulkServer interface {
	addr() string
	// serve accepts and serves connections until ctx ends or the
	// listener closes.
	serve(ctx context.Context) error
	// conns is the number of connections held.
	conns() int
	close() error
}

// heldConns counts the connections a server holds. Idle connections are
// kept in a slice rather than by a goroutine each, so that the idle
// measurement sees the stack's memory only.
type heldConns[T any] struct {
	mu    sync.Mutex
	held  []T
	count int
}

func (h *heldConns[T]) add(c T, keep bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if keep {
		h.held = append(h.held, c)
	}
	h.count++
}

func (h *heldConns[T]) done() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.count--
}

func (h *heldConns[T]) n() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

type satquicBulkServer struct {
	ln   *quic.Listener
	idle bool
	held heldConns[*quic.Conn]
	wg   sync.WaitGroup
}

func listenSatquicBulk(o BulkServerOptions) (*satquicBulkServer, error) {
	tlsConf := &tls.Config{Certificates: []tls.Certificate{o.Cert}, NextProtos: []string{BulkALPN}}
	ln, err := quic.ListenAddr(o.Addr, tlsConf, bulkSatquicServerConfig())
	if err != nil {
		return nil, err
	}
	return &satquicBulkServer{ln: ln, idle: o.Idle}, nil
}

func (s *satquicBulkServer) addr() string { return s.ln.Addr().String() }
func (s *satquicBulkServer) conns() int   { return s.held.n() }

func (s *satquicBulkServer) serve(ctx context.Context) error {
	defer s.wg.Wait()
	for {
		c, err := s.ln.Accept(ctx)
		if err != nil {
			return nil
		}
		s.held.add(c, s.idle)
		if s.idle {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.held.done()
			s.serveConn(ctx, c)
		}()
	}
}

// serveConn answers every stream of a connection until it closes.
func (s *satquicBulkServer) serveConn(ctx context.Context, c *quic.Conn) {
	for {
		st, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			n, err := ParseBulkRequest(st)
			if err != nil {
				st.CancelWrite(1)
				return
			}
			// A failed write shows on the client's side.
			if writeBulk(st, n) == nil {
				_ = st.Close()
			}
		}()
	}
}

func (s *satquicBulkServer) close() error { return s.ln.Close() }

type tcpTLSBulkServer struct {
	ln   net.Listener
	held heldConns[net.Conn]
	wg   sync.WaitGroup
}

func listenTCPTLSBulk(o BulkServerOptions) (*tcpTLSBulkServer, error) {
	if o.Idle {
		return nil, errors.New("tcp-tls has no idle measurement")
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{o.Cert}, NextProtos: []string{BulkALPN}, MinVersion: tls.VersionTLS13}
	ln, err := tls.Listen("tcp", o.Addr, tlsConf)
	if err != nil {
		return nil, err
	}
	return &tcpTLSBulkServer{ln: ln}, nil
}

func (s *tcpTLSBulkServer) addr() string { return s.ln.Addr().String() }
func (s *tcpTLSBulkServer) conns() int   { return s.held.n() }

func (s *tcpTLSBulkServer) serve(ctx context.Context) error {
	defer s.wg.Wait()
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	// Connections still under way when the server stops are closed, so
	// that the wait below ends.
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		for c := range open {
			c.Close()
		}
	})
	defer stop()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return nil
		}
		mu.Lock()
		open[c] = true
		mu.Unlock()
		s.held.add(c, false)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.held.done()
			defer func() {
				mu.Lock()
				delete(open, c)
				mu.Unlock()
				c.Close()
			}()
			if n, err := ParseBulkRequest(c); err == nil {
				_ = writeBulk(c, n)
			}
		}()
	}
}

func (s *tcpTLSBulkServer) close() error { return s.ln.Close() }
