package quic

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Listener accepts the connections clients open to a Transport.
type Listener struct {
	t   *Transport
	cfg core.Config
	// conf is the application's Config as Listen received it: its
	// address validation policy and qlog settings.
	conf Config
	// validator checks clients' tokens, answers with Retry packets and
	// makes the tokens of NEW_TOKEN frames.
	validator *core.AddressValidator
	// versions are the QUIC versions accepted; nil means all the core
	// speaks.
	versions []wire.Version

	// limits bound the connections the Listener holds
	// (listener_admit.go).
	limits serverLimits
	// early: Accept hands out connections before their handshake
	// completes (ListenEarly, listener_early.go).
	early bool

	mu    sync.Mutex
	queue []*Conn // handshake complete (or early), not accepted yet
	// handshakes and established hold the slots of the connections in
	// handshake and of those whose handshake completed, until they end;
	// sources counts them per source.
	handshakes  handshakeQueue
	established slotQueue
	sources     map[netip.Prefix]*sourceUse
	// unvalidated counts the handshakes in progress with clients whose
	// address is not validated.
	unvalidated int
	ready       broadcast
	err         error // set once closed
	// counters are the counters of Stats (listener_stats.go).
	counters listenerCounters
}

// newListener prepares a Listener's connection configuration. The TLS
// configuration is copied here, once: crypto/tls draws session ticket
// keys per tls.Config, so a copy per connection would issue tickets that
// the next connection cannot open, and sessions would never resume.
// TLS 1.3 is the minimum, as QUIC requires (RFC 9001 section 4.2), and
// the core uses a config with that minimum as it is.
func newListener(t *Transport, cc core.Config, conf *Config, lim serverLimits) *Listener {
	tc := cc.TLS.Clone()
	tc.MinVersion = max(tc.MinVersion, tls.VersionTLS13)
	cc.TLS = tc
	cc.ConnIDLen, cc.ResetKey = t.cidLen, t.resetKey
	v := &core.AddressValidator{Tokens: t.tokens, Epoch: t.epoch, ConnIDLen: t.cidLen}
	cc.AddressValidator = v
	l := &Listener{t: t, validator: v, versions: cc.Versions, limits: lim, sources: map[netip.Prefix]*sourceUse{}}
	if conf != nil {
		l.conf = *conf
		cc.Allow0RTT = conf.Allow0RTT
	}
	l.cfg = cc
	return l
}

// acceptsVersion reports whether the Listener accepts QUIC version v.
func (l *Listener) acceptsVersion(v wire.Version) bool {
	if len(l.versions) == 0 {
		return v.IsSupported()
	}
	return slices.Contains(l.versions, v)
}

// ListenAddr opens a UDP socket on addr ("host:port") and listens on it.
// Closing the Listener closes the socket and every connection.
func ListenAddr(addr string, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("quic: %w", err)
	}
	l, err := listenOwned(pc, tlsConf, conf)
	if err != nil {
		_ = pc.Close()
	}
	return l, err
}

// Listen listens on pc, which the Listener's Transport uses from now on;
// closing the Listener closes every connection but leaves pc open.
func Listen(pc net.PacketConn, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	t := &Transport{Conn: pc, singleUse: true}
	l, err := t.Listen(tlsConf, conf)
	if err != nil {
		_ = t.closeIfStarted()
	}
	return l, err
}

func listenOwned(pc net.PacketConn, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	t := &Transport{Conn: pc, singleUse: true, ownsConn: true}
	l, err := t.Listen(tlsConf, conf)
	if err != nil {
		_ = t.closeIfStarted()
	}
	return l, err
}

// closeIfStarted closes a Transport whose set-up may have failed before
// its reader started.
func (t *Transport) closeIfStarted() error {
	if t.io == nil {
		return nil
	}
	return t.Close()
}

// Accept returns the next connection whose handshake completed, or, on a
// Listener from ListenEarly, the next that can read 0-RTT data and answer
// in 0.5-RTT; it waits for one until ctx ends or the Listener closes
// (ErrServerClosed).
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			c := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			l.mu.Unlock()
			return c, nil
		}
		if l.err != nil {
			err := l.err
			l.mu.Unlock()
			return nil, err
		}
		wait := l.ready.wait()
		l.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Addr is the local address.
func (l *Listener) Addr() net.Addr { return l.t.LocalAddr() }

// Close stops accepting: handshakes in progress and connections not
// accepted yet are closed. Accepted connections go on, unless the Listener
// came from ListenAddr or Listen, whose Transport closes with it.
func (l *Listener) Close() error {
	if l.t.singleUse {
		return l.t.Close()
	}
	l.t.mu.Lock()
	if l.t.listener == l {
		l.t.listener = nil
	}
	l.t.mu.Unlock()
	l.closeQueue(ErrServerClosed)
	return nil
}

// closeQueue closes the Listener and the connections it has not handed
// out.
func (l *Listener) closeQueue(err error) {
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return
	}
	l.err = err
	q := l.queue
	l.queue = nil
	l.ready.fire()
	l.mu.Unlock()
	for _, c := range q {
		c.closeLocal(0, "server closed")
	}
}

// wantsRetry reports whether a client at addr without a valid token
// should prove its address first.
func (l *Listener) wantsRetry(addr netip.AddrPort) bool {
	if f := l.conf.RequireAddressValidation; f != nil && f(net.UDPAddrFromAddrPort(addr)) {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.unvalidated >= l.limits.unvalidated
}

// handshakeOver returns the place of an unvalidated handshake that ended
// (completed or not).
func (l *Listener) handshakeOver() {
	l.mu.Lock()
	l.unvalidated--
	l.mu.Unlock()
}

// enqueue offers a connection to Accept: one whose handshake completed,
// which counts among the established connections from now on, or an early
// one, which counts among the handshakes until its handshake completes
// (promote). It reports false when the Listener closed or evicted the
// connection meanwhile.
func (l *Listener) enqueue(c *Conn, complete bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil || c.slot.state != slotHandshake {
		return false
	}
	if complete {
		l.establish(c.slot, l.t.now())
	}
	l.queue = append(l.queue, c)
	l.ready.fire()
	return true
}
