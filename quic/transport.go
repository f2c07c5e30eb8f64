package quic

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/udp"
	"github.com/satquic/satquic/quic/internal/wire"
)

// StatelessResetKey derives the stateless reset tokens of the connection
// IDs a Transport issues (RFC 9000 section 10.3.2). Keep it across
// restarts of a server, so that after a crash it can still reset the
// connections it forgot.
type StatelessResetKey [32]byte

// DefaultConnectionIDLength is the length of the connection IDs a
// Transport issues unless told otherwise.
const DefaultConnectionIDLength = 8

// Transport is a UDP socket for QUIC: it reads datagrams, routes them to
// its connections by Destination Connection ID, and carries both a
// Listener (at most one) and any number of outgoing connections (Dial).
// Set the exported fields before the first Listen or Dial; they must not
// change afterwards.
type Transport struct {
	// Conn is the socket. A *net.UDPConn gets batched I/O (recvmmsg,
	// sendmmsg, GSO, GRO on Linux); any other net.PacketConn works
	// through ReadFrom and WriteTo. Close closes it only if the Transport
	// opened it itself (ListenAddr, DialAddr); otherwise it stays open.
	Conn net.PacketConn
	// ConnectionIDLength is the length of the connection IDs this
	// Transport issues, 4 to 20 bytes (default 8). It is fixed per
	// Transport: short headers do not carry the length.
	ConnectionIDLength int
	// StatelessResetKey, if set, derives the stateless reset tokens; a
	// random key is drawn otherwise.
	StatelessResetKey *StatelessResetKey
	// TokenKey, if set, seals the address validation tokens of the
	// Transport's Listener; a random key is drawn otherwise.
	TokenKey *TokenKey
	// LoadBalancer, if set, makes the Transport issue connection IDs in
	// QUIC-LB's format with this server ID, so that a load balancer in
	// front of several servers routes each connection to its own (see
	// QUICLB). It decides the connection ID length.
	LoadBalancer *QUICLB
	// PreferredConn, if set, is a second socket of a listening
	// Transport, bound to a specific address: the Listener's
	// connections offer it as their preferred_address (RFC 9000
	// section 9.6), clients move there once their handshake is
	// confirmed, and the connections answer from it from then on. It
	// is never closed by the Transport (transport_preferred.go).
	PreferredConn net.PacketConn

	initOnce sync.Once
	initErr  error

	io       *udp.Conn   // the first socket's
	pref     *pathSocket // the reader of PreferredConn
	prefSock *socket     // its writer, and the socket its datagrams count on
	ownsConn bool
	// groupConns are the other sockets of a reuseport group from
	// ListenMulti; socks are all the sockets the Transport reads, and
	// fallback why a group serves from one (multi.go).
	groupConns []*net.UDPConn
	socks      []*socket
	fallback   error
	cids       connIDScheme
	// singleUse: the Transport was opened for one Listener or one
	// connection (ListenAddr, DialAddr) and closes with it.
	singleUse bool
	epoch     time.Time
	resetKey  *crypto.ResetKey
	tokens    *crypto.TokenProtector
	cidLen    int

	mu     sync.RWMutex
	routes map[wire.ConnectionID]*Conn
	conns  map[*Conn]struct{}
	// peerConns counts the connections to each peer address: a
	// datagram for no connection from one of them is never answered
	// with a Stateless Reset (transport_peers.go).
	peerConns map[netip.AddrPort]int
	// resets indexes the peers' stateless reset tokens by token, so
	// that a Stateless Reset reaches only its connection
	// (transport_resets.go).
	resets   map[wire.StatelessResetToken]resetOwners
	listener *Listener
	closed   bool
	closeErr error // what the connections report once the Transport closed

	// closing is closed when Close starts: every connection closes and
	// its goroutine returns (connWG), then the readers stop (readers).
	closing    chan struct{}
	closeOnce  sync.Once
	socketOnce sync.Once
	connWG     sync.WaitGroup
	readers    sync.WaitGroup
	// drain ends the server connections that drain, which have no
	// goroutine (transport_drain.go).
	drain drainer

	// parkAfterOverride, set by tests before the Transport starts,
	// replaces parkAfter (conn_park.go).
	parkAfterOverride time.Duration
}

// init opens the Transport on first use and starts its reader.
func (t *Transport) init() error {
	t.initOnce.Do(func() { t.initErr = t.doInit() })
	return t.initErr
}

func (t *Transport) doInit() error {
	if t.Conn == nil {
		return errors.New("quic: Transport without a Conn")
	}
	cids, cidLen, err := newConnIDScheme(t)
	if err != nil {
		return err
	}
	t.cids, t.cidLen = cids, cidLen
	if t.cidLen < 4 || t.cidLen > wire.MaxConnectionIDLen {
		return fmt.Errorf("quic: ConnectionIDLength %d out of [4, 20]", t.cidLen)
	}
	key := t.StatelessResetKey
	if key == nil {
		key = new(StatelessResetKey)
		if _, err := rand.Read(key[:]); err != nil {
			return fmt.Errorf("quic: drawing a stateless reset key: %w", err)
		}
	}
	rk, err := crypto.NewResetKey(key[:])
	if err != nil {
		return err
	}
	tokens, err := newTokenProtector(t.TokenKey)
	if err != nil {
		return err
	}
	if err := t.openSockets(udp.Options{MaxDatagramSize: maxPacketSize}); err != nil {
		return fmt.Errorf("quic: %w", err)
	}
	t.io = t.socks[0].io
	t.resetKey = rk
	t.tokens = tokens
	t.epoch = time.Now()
	t.routes = map[wire.ConnectionID]*Conn{}
	t.conns = map[*Conn]struct{}{}
	t.peerConns = map[netip.AddrPort]int{}
	t.resets = map[wire.StatelessResetToken]resetOwners{}
	t.closing = make(chan struct{})
	for _, s := range t.socks {
		t.readers.Add(1)
		go t.readLoop(s)
	}
	return t.startPreferred()
}

// now is the time of the connection cores: monotonic, since the epoch.
func (t *Transport) now() time.Duration { return time.Since(t.epoch) }

// LocalAddr is the socket's address.
func (t *Transport) LocalAddr() net.Addr { return t.Conn.LocalAddr() }

// Listen starts a server on the Transport. Only one Listener may be open
// at a time. tlsConf needs a certificate and NextProtos (ALPN). The
// Listener works on a copy of tlsConf, taken now, whose session ticket
// keys all its connections share, so that sessions resume.
func (t *Transport) Listen(tlsConf *tls.Config, conf *Config) (*Listener, error) {
	return t.listen(tlsConf, conf, false)
}

// listen is Listen, or ListenEarly when early.
func (t *Transport) listen(tlsConf *tls.Config, conf *Config, early bool) (*Listener, error) {
	cc, err := conf.coreConfig(tlsConf)
	if err != nil {
		return nil, err
	}
	lim, err := conf.serverLimits()
	if err != nil {
		return nil, err
	}
	if len(tlsConf.Certificates) == 0 && tlsConf.GetCertificate == nil && tlsConf.GetConfigForClient == nil {
		return nil, fmt.Errorf("%w: tls.Config has no certificate", errConfig)
	}
	if err := t.init(); err != nil {
		return nil, err
	}
	cc.DisableECN = cc.DisableECN || !t.io.Capabilities().ECN
	if err := t.offerPreferred(&cc); err != nil {
		return nil, err
	}
	if err := serverCarefulResume(cc.CarefulResume, conf.resumeKey(), t.epoch); err != nil {
		return nil, err
	}
	l := newListener(t, cc, conf, lim)
	l.early = early
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return nil, t.closeErr
	case t.listener != nil:
		return nil, errors.New("quic: the Transport already has a Listener")
	}
	t.listener = l
	return l, nil
}

// Dial opens a connection to addr and returns once the handshake
// completed. If ctx ends first, the attempt is abandoned with its error.
// Without a ServerName, tlsConf verifies the certificate for addr's IP.
// tlsConf's ClientSessionCache, if set, keeps session tickets: a later
// connection to the same server resumes its session.
func (t *Transport) Dial(ctx context.Context, addr net.Addr, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	c, err := t.dial(ctx, addr, tlsConf, conf, false)
	if err != nil {
		return nil, err
	}
	return c, c.waitHandshake(ctx)
}

// dial starts a client connection; early allows 0-RTT.
func (t *Transport) dial(ctx context.Context, addr net.Addr, tlsConf *tls.Config, conf *Config, early bool) (*Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	remote, err := addrPort(addr)
	if err != nil {
		return nil, err
	}
	cc, err := conf.coreConfig(withServerName(tlsConf, remote.Addr().String()))
	if err != nil {
		return nil, err
	}
	if err := t.init(); err != nil {
		return nil, err
	}
	// A socket that cannot read and set codepoints has no ECN.
	cc.DisableECN = cc.DisableECN || !t.io.Capabilities().ECN
	cc.ConnIDLen, cc.ResetKey = t.cidLen, t.resetKey
	// A client connection belongs to the first socket.
	cc.NewConnID = t.cids.generator(0)
	cc.Allow0RTT = early
	qlog := newQlogSink(conf, true)
	if qlog != nil {
		cc.Qlog = qlog
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, t.closeErr
	}
	cc2, err := core.NewClientConn(&cc, t.now(), remote)
	if err != nil {
		t.mu.Unlock()
		return nil, fmt.Errorf("quic: %w", err)
	}
	qlog.attach(cc2.OriginalDestConnID())
	c := newConn(t, cc2, nil, cc.Version)
	c.sock = t.socks[0]
	c.qlog = qlog
	t.startConnLocked(c)
	t.mu.Unlock()
	return c, nil
}

// startConnLocked registers a connection and starts its goroutine; t.mu
// is held and the Transport is open.
func (t *Transport) startConnLocked(c *Conn) {
	t.conns[c] = struct{}{}
	t.addPeerLocked(c)
	t.connWG.Add(1)
	c.startLoop()
}

// addRoute makes datagrams for id go to c.
func (t *Transport) addRoute(id wire.ConnectionID, c *Conn) {
	t.mu.Lock()
	t.routes[id] = c
	t.mu.Unlock()
}

// removeRoute stops routing id to c.
func (t *Transport) removeRoute(id wire.ConnectionID, c *Conn) {
	t.mu.Lock()
	if t.routes[id] == c {
		delete(t.routes, id)
	}
	t.mu.Unlock()
}

// forget removes a finished connection, its routes and its peer's reset
// tokens, and gives its places in its Listener's limits back.
func (t *Transport) forget(c *Conn, ids []wire.ConnectionID) {
	t.mu.Lock()
	for _, id := range ids {
		if t.routes[id] == c {
			delete(t.routes, id)
		}
	}
	delete(t.conns, c)
	t.removePeerLocked(c)
	t.dropAllResetsLocked(c)
	t.mu.Unlock()
	if c.slot != nil {
		c.l.leave(c.slot)
	}
}

// Close closes the Transport: its Listener, and every connection, which
// sends a CONNECTION_CLOSE (application error 0) first. It returns once
// every goroutine of the Transport has ended. Connections report
// ErrTransportClosed.
func (t *Transport) Close() error {
	if err := t.init(); err != nil {
		t.closeUnstarted()
		return err
	}
	t.shutdown(ErrTransportClosed)
	t.connWG.Wait()
	err := t.closeSocket()
	t.readers.Wait()
	if t.pref != nil {
		t.pref.stop()
	}
	if !t.ownsConn {
		// The caller's socket is usable again, without a deadline.
		_ = t.io.SetReadDeadline(time.Time{})
	}
	return err
}

// shutdown starts closing: no new connections, and every connection's
// goroutine sees t.closing.
func (t *Transport) shutdown(reason error) {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed, t.closeErr = true, reason
		l := t.listener
		conns := make([]*Conn, 0, len(t.conns))
		for c := range t.conns {
			conns = append(conns, c)
		}
		t.mu.Unlock()
		if l != nil {
			l.closeQueue(ErrServerClosed)
		}
		close(t.closing)
		// A parked connection learns of it only from its signal.
		for _, c := range conns {
			c.signal()
		}
		// A draining one has no goroutine to learn of it.
		t.endAllDrained()
	})
}

// closeSocket ends the readers: it closes the sockets the Transport
// opened, and interrupts the read on one it was given.
func (t *Transport) closeSocket() error {
	var err error
	t.socketOnce.Do(func() {
		if !t.ownsConn {
			err = t.io.SetReadDeadline(time.Unix(1, 0))
			return
		}
		for _, s := range t.socks {
			err = errors.Join(err, s.io.Close())
		}
	})
	return err
}

// isClosing reports whether Close started.
func (t *Transport) isClosing() bool {
	select {
	case <-t.closing:
		return true
	default:
		return false
	}
}

// addrPort converts a UDP address; IPv4-mapped IPv6 addresses become IPv4,
// as received datagrams report them.
func addrPort(a net.Addr) (netip.AddrPort, error) {
	var ap netip.AddrPort
	switch a := a.(type) {
	case *net.UDPAddr:
		ap = a.AddrPort()
	case interface{ AddrPort() netip.AddrPort }:
		ap = a.AddrPort()
	case nil:
		return ap, errors.New("quic: nil address")
	default:
		var err error
		if ap, err = netip.ParseAddrPort(a.String()); err != nil {
			return ap, fmt.Errorf("quic: address %v: %w", a, err)
		}
	}
	if !ap.IsValid() {
		return ap, fmt.Errorf("quic: invalid address %v", a)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}
