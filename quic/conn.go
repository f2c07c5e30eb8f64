package quic

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Conn is a QUIC connection. Its methods are safe for concurrent use.
type Conn struct {
	t        *Transport
	l        *Listener // the Listener that admitted a server connection
	isClient bool
	remote   netip.AddrPort
	// start is when the connection began, on the Transport's clock.
	start time.Duration
	// slot is a server connection's place in its Listener's limits.
	slot *connSlot
	// sock is the socket the connection belongs to and sends on.
	sock *socket
	// peerCounted: c counts among its Transport's connections to
	// remote, guarded by the Transport's mu (transport_peers.go).
	peerCounted bool

	// Owned by the connection goroutine.
	routes   []wire.ConnectionID // connection IDs routed to c
	odcid    wire.ConnectionID   // a server's route for the client's first Initials
	hasODCID bool
	enqueued bool // handed to the Listener's accept queue
	// resetTokens are the peer's reset tokens c is indexed under in its
	// Transport's resets, written under the Transport's mu too;
	// tokenScratch is the buffer the next list is read into
	// (transport_resets.go). Both start in tokenBufs, room for as many
	// as the default active_connection_id_limit allows, so that a
	// connection lists them without allocating.
	resetTokens  []wire.StatelessResetToken
	tokenScratch []wire.StatelessResetToken
	tokenBufs    [2][core.DefaultActiveConnIDLimit]wire.StatelessResetToken
	// unvalidated: a server connection that counts among its Listener's
	// handshakes with an unvalidated client until the handshake ends.
	unvalidated bool

	// mu guards the core and everything below it: the connection
	// goroutine holds it while it feeds the core, and the application's
	// goroutines while they read and write streams.
	mu            sync.Mutex
	core          *core.Conn
	streams       map[uint64]*streamState
	accept        [2][]*streamState // peer streams not accepted yet: [0] bidi, [1] uni
	acceptReady   [2]broadcast
	opening       [2]openQueue // OpenStreamSync calls waiting for credit (conn_open.go)
	err           error        // why the connection closed; nil while open
	byTransport   bool         // closed because the Transport closed
	handshakeTime time.Duration
	closeFlushed  bool
	qlog          *qlogSink
	datagramReady broadcast // a DATAGRAM frame arrived (datagram.go)
	datagramRoom  broadcast // packets were sent: the DATAGRAM send queue may have room
	// version is the QUIC version of the core's latest long-header
	// packet: the connection's once the handshake is over.
	version Version

	handshakeDone chan struct{} // closed when the handshake completes
	confirmed     chan struct{} // closed when the handshake is confirmed
	closed        chan struct{} // closed when err is set
	flushed       chan struct{} // closed once our CONNECTION_CLOSE went out
	loopDone      chan struct{} // closed when the connection goroutine returns
	ctx           context.Context
	cancel        context.CancelCauseFunc

	// The reader's datagrams wait in inbox for the connection goroutine,
	// which signal tells that there is work.
	inboxMu sync.Mutex
	inbox   []*packet
	loopState

	// path is the socket of a client that migrated (migrate.go), nil
	// while it sends on its Transport's; probe is the socket whose path
	// is being probed, and probeDone gets the probe's outcome. Guarded
	// by mu.
	path      *pathSocket
	probe     *pathSocket
	probeDone chan error
	oldPaths  []*pathSocket
	// preferred: a server connection whose client moved to the
	// Transport's PreferredConn, which it sends from.
	preferred bool
}

// newConn wraps a core connection; the caller registers it and starts its
// goroutine.
func newConn(t *Transport, cc *core.Conn, l *Listener, v wire.Version) *Conn {
	if v == 0 {
		v = wire.Version1
	}
	c := &Conn{
		version:       Version(v),
		t:             t,
		l:             l,
		isClient:      cc.IsClient(),
		remote:        cc.RemoteAddr(),
		start:         t.now(),
		core:          cc,
		streams:       map[uint64]*streamState{},
		handshakeDone: make(chan struct{}),
		confirmed:     make(chan struct{}),
		closed:        make(chan struct{}),
		flushed:       make(chan struct{}),
		loopDone:      make(chan struct{}),
	}
	c.resetTokens, c.tokenScratch = c.tokenBufs[0][:0], c.tokenBufs[1][:0]
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	cc.SetStreamMemory(c.streamMemoryLocked)
	return c
}

// waitHandshake waits for a client's handshake; on failure the connection
// is closed.
func (c *Conn) waitHandshake(ctx context.Context) error {
	select {
	case <-c.handshakeDone:
		return nil
	case <-c.closed:
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		c.releaseSingleUse()
		return err
	case <-ctx.Done():
		c.closeLocal(0, "")
		c.releaseSingleUse()
		return ctx.Err()
	}
}

// releaseSingleUse closes the Transport of a DialAddr connection once the
// connection is over.
func (c *Conn) releaseSingleUse() {
	if c.isClient && c.t.singleUse {
		_ = c.t.Close()
	}
}

// closeLocal closes the core with an application error and wakes the
// goroutine to send CONNECTION_CLOSE.
func (c *Conn) closeLocal(code uint64, reason string) {
	c.mu.Lock()
	c.core.Close(c.t.now(), code, reason)
	c.mu.Unlock()
	c.signal()
}

// CloseWithError closes the connection with an application error code
// and message (CONNECTION_CLOSE, RFC 9000 section 10.2). It returns once
// the CONNECTION_CLOSE was sent; streams and pending calls then fail with
// an *ApplicationError. Closing a closed connection does nothing.
func (c *Conn) CloseWithError(code ApplicationErrorCode, msg string) error {
	c.closeLocal(uint64(code), msg)
	select {
	case <-c.flushed:
	case <-c.loopDone:
	}
	c.releaseSingleUse()
	return nil
}

// Context is done when the connection closed; context.Cause gives why.
func (c *Conn) Context() context.Context { return c.ctx }

// LocalAddr is the local address of the socket the connection sends on:
// its Transport's, the one a client migrated to, or a server's
// PreferredConn once its client moved there.
func (c *Conn) LocalAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.path != nil:
		return c.path.io.LocalAddr()
	case c.preferred:
		return c.t.pref.io.LocalAddr()
	}
	return c.t.LocalAddr()
}

// RemoteAddr is the peer's address: where a server sends after the
// client moved, too (RFC 9000 section 9.3).
func (c *Conn) RemoteAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	return net.UDPAddrFromAddrPort(c.remote)
}

// ConnectionState describes a connection's handshake.
type ConnectionState struct {
	// TLS is the TLS state: NegotiatedProtocol (ALPN), cipher suite,
	// peer certificates, and DidResume when the handshake resumed a
	// session.
	TLS tls.ConnectionState
	// Version is the QUIC version in use.
	Version Version
	// Used0RTT reports, at a client, that the server accepted the 0-RTT
	// data (known once the handshake completed), and at a server that it
	// accepted the client's 0-RTT packets.
	Used0RTT bool
	// SupportsDatagrams reports that both endpoints offered DATAGRAM
	// frames (Config.EnableDatagrams; RFC 9221): SendDatagram works.
	SupportsDatagrams bool
}

// ConnectionState returns the connection's TLS and QUIC state.
func (c *Conn) ConnectionState() ConnectionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ConnectionState{
		TLS: c.core.ConnectionState(), Version: c.version, Used0RTT: c.core.EarlyDataAccepted(),
		SupportsDatagrams: c.core.SupportsDatagrams(),
	}
}

// HandshakeComplete is closed when the handshake completed. A connection
// from DialEarly may be used before; if its handshake fails, the channel
// stays open and Context ends.
func (c *Conn) HandshakeComplete() <-chan struct{} { return c.handshakeDone }

// closeErrLocked returns the error a closed connection gives calls; c.mu
// is held.
func (c *Conn) closeErrLocked() error {
	if c.err != nil {
		return c.err
	}
	return ErrTransportClosed
}

// OpenStream opens a bidirectional stream without waiting: it fails with
// ErrStreamLimit if the peer allows no other stream now. The peer learns
// of the stream when data (or a FIN) is sent on it.
func (c *Conn) OpenStream() (*Stream, error) {
	s, err := c.open(true)
	if err != nil {
		return nil, err
	}
	return s.bidiStream(), nil
}

// OpenStreamSync opens a bidirectional stream, waiting for the peer to
// allow one if needed, until ctx ends.
func (c *Conn) OpenStreamSync(ctx context.Context) (*Stream, error) {
	s, err := c.openSync(ctx, true)
	if err != nil {
		return nil, err
	}
	return s.bidiStream(), nil
}

// OpenUniStream opens a unidirectional stream without waiting.
func (c *Conn) OpenUniStream() (*SendStream, error) {
	s, err := c.open(false)
	if err != nil {
		return nil, err
	}
	return &SendStream{s: s}, nil
}

// OpenUniStreamSync opens a unidirectional stream, waiting for the peer to
// allow one if needed, until ctx ends.
func (c *Conn) OpenUniStreamSync(ctx context.Context) (*SendStream, error) {
	s, err := c.openSync(ctx, false)
	if err != nil {
		return nil, err
	}
	return &SendStream{s: s}, nil
}

func (c *Conn) open(bidi bool) (*streamState, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, _, err := c.openLocked(bidi)
	return s, err
}

// openLocked opens a stream. Without the peer's credit it fails with
// ErrStreamLimit, and before the handshake gave the peer's limits it
// returns the channel that tells when they came.
func (c *Conn) openLocked(bidi bool) (*streamState, <-chan struct{}, error) {
	if c.err != nil {
		return nil, nil, c.err
	}
	id, err := c.core.OpenStream(c.t.now(), bidi)
	switch {
	case errors.Is(err, core.ErrStreamLimit):
		// The caller waits in line (conn_open.go).
		return nil, nil, ErrStreamLimit
	case errors.Is(err, core.ErrHandshakeIncomplete):
		// A connection from DialEarly without 0-RTT: the server's
		// limits come with the handshake.
		return nil, c.handshakeDone, ErrStreamLimit
	case errors.Is(err, core.ErrClosed):
		return nil, nil, c.closeErrLocked()
	case err != nil:
		return nil, nil, err
	}
	return c.streamLocked(id), nil, nil
}

// AcceptStream returns the next bidirectional stream the peer opened,
// waiting until ctx ends or the connection closes.
func (c *Conn) AcceptStream(ctx context.Context) (*Stream, error) {
	s, err := c.acceptNext(ctx, 0)
	if err != nil {
		return nil, err
	}
	return s.bidiStream(), nil
}

// AcceptUniStream returns the next unidirectional stream the peer opened.
func (c *Conn) AcceptUniStream(ctx context.Context) (*ReceiveStream, error) {
	s, err := c.acceptNext(ctx, 1)
	if err != nil {
		return nil, err
	}
	return &ReceiveStream{s: s}, nil
}

func (c *Conn) acceptNext(ctx context.Context, dir int) (*streamState, error) {
	for {
		c.mu.Lock()
		if q := c.accept[dir]; len(q) > 0 {
			s := q[0]
			q[0] = nil
			c.accept[dir] = q[1:]
			c.mu.Unlock()
			return s, nil
		}
		if c.err != nil {
			err := c.err
			c.mu.Unlock()
			return nil, err
		}
		wait := c.acceptReady[dir].wait()
		c.mu.Unlock()
		select {
		case <-wait:
		case <-c.closed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func dirIndex(bidi bool) int {
	if bidi {
		return 0
	}
	return 1
}
