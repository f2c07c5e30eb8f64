package quic

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"

	"github.com/satquic/satquic/quic/internal/core"
)

// maxPendingConns bounds the connections a Listener holds that Accept has
// not taken yet, handshakes included. Beyond it, new clients' Initials are
// dropped: they retry, or give up at their handshake timeout.
const maxPendingConns = 1024

// Listener accepts the connections clients open to a Transport.
type Listener struct {
	t   *Transport
	cfg core.Config

	mu      sync.Mutex
	queue   []*Conn // handshake complete, not accepted yet
	pending int     // connections started and not accepted yet
	ready   broadcast
	err     error // set once closed
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

// Accept returns the next connection whose handshake completed, waiting
// for one until ctx ends or the Listener closes (ErrServerClosed).
func (l *Listener) Accept(ctx context.Context) (*Conn, error) {
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			c := l.queue[0]
			l.queue[0] = nil
			l.queue = l.queue[1:]
			l.pending--
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

// admit reserves room for a new connection.
func (l *Listener) admit() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil || l.pending >= maxPendingConns {
		return false
	}
	l.pending++
	return true
}

// release returns the room of a connection that will never be accepted.
func (l *Listener) release() {
	l.mu.Lock()
	l.pending--
	l.mu.Unlock()
}

// enqueue offers a connection whose handshake completed to Accept. It
// reports false when the Listener closed meanwhile.
func (l *Listener) enqueue(c *Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return false
	}
	l.queue = append(l.queue, c)
	l.ready.fire()
	return true
}
