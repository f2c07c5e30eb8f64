package quic

// Client migration (RFC 9000 section 9.2). A connection belongs to the
// Transport that dialed it, whose socket and reader carry it; Migrate
// moves it to another socket, which the connection then reads itself: a
// pathSocket with a reader goroutine that hands every datagram to this one
// connection (no demultiplexing: the socket is the connection's alone).
// While the new path is probed, probe datagrams leave from the new socket
// and everything else from the old one; once the server answered, every
// datagram leaves from the new socket. The Transport keeps routing the
// connection's IDs, so that late datagrams on the old socket still arrive.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/udp"
)

var (
	// ErrMigrationDisabled: Migrate on a connection whose server sent
	// disable_active_migration (RFC 9000 section 18.2).
	ErrMigrationDisabled = core.ErrMigrationDisabled
	// ErrNoSpareConnID: Migrate on a connection whose server gave no
	// connection ID for a new path (RFC 9000 section 9.5).
	ErrNoSpareConnID = core.ErrNoSpareConnID
	// ErrPathProbeFailed: the new path did not answer its PATH_CHALLENGE
	// in time (RFC 9000 section 8.2.4); the connection stays where it
	// was.
	ErrPathProbeFailed = core.ErrProbeFailed
)

// Migrate moves a client connection to the socket pc: it probes the path
// from pc to the server with PATH_CHALLENGE, in packets carrying a
// connection ID the server gave and has not seen (RFC 9000 sections 9.2
// and 9.5), and once a PATH_RESPONSE comes back sends everything from pc,
// retires the old connection ID and starts congestion control afresh on
// the new path (section 9.4). It returns when the connection moved, or
// with ErrPathProbeFailed, ErrMigrationDisabled, ErrNoSpareConnID, the
// connection's error, or ctx's; the connection then stays where it was.
// It waits for the handshake to be confirmed first. The connection reads pc from then on,
// until it ends; pc is not closed (close it once the connection is over).
// The old socket is left as it was: a Transport's stays open for its
// other connections, a DialAddr connection's closes with the connection.
func (c *Conn) Migrate(ctx context.Context, pc net.PacketConn) error {
	if !c.isClient {
		return fmt.Errorf("quic: migrate: %w", core.ErrNotClient)
	}
	// An endpoint does not migrate before its handshake is confirmed
	// (RFC 9000 section 9), a round trip after Dial returns at most.
	select {
	case <-c.confirmed:
	case <-c.closed:
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
	s, err := newPathSocket(pc, c)
	if err != nil {
		return fmt.Errorf("quic: migrate: %w", err)
	}
	done := make(chan error, 1)
	c.mu.Lock()
	if err := c.startProbe(s, done); err != nil {
		c.mu.Unlock()
		s.stop()
		return err
	}
	c.mu.Unlock()
	c.signal()
	select {
	case err := <-done:
		if err != nil {
			s.stop()
		}
		return err
	case <-c.closed:
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		return err
	case <-ctx.Done():
		return c.abandonProbe(s, done, ctx.Err())
	}
}

// startProbe starts probing from s; c.mu is held.
func (c *Conn) startProbe(s *pathSocket, done chan error) error {
	switch {
	case c.err != nil:
		return c.err
	case c.probe != nil:
		return fmt.Errorf("quic: migrate: %w", core.ErrProbeUnderway)
	}
	if err := c.core.ProbePath(c.t.now()); err != nil {
		return fmt.Errorf("quic: migrate: %w", err)
	}
	c.probe, c.probeDone = s, done
	return nil
}

// abandonProbe gives up the probe from s when Migrate's context ended,
// unless its outcome came meanwhile.
func (c *Conn) abandonProbe(s *pathSocket, done chan error, cause error) error {
	c.mu.Lock()
	if c.probe != s {
		c.mu.Unlock()
		// Settled between the select and the lock.
		err := <-done
		if err != nil {
			s.stop()
		}
		return err
	}
	c.core.CancelProbe()
	c.probe, c.probeDone = nil, nil
	c.mu.Unlock()
	s.stop()
	return cause
}

// onPathEvent acts on the core's path events; c.mu is held.
func (c *Conn) onPathEvent(ev core.Event) {
	switch ev.Kind {
	case core.EventPeerAddressChanged:
		c.setRemote(c.core.RemoteAddr())
	case core.EventPreferredAddressUsed:
		c.preferred = c.t.pref != nil // transport_preferred.go
	case core.EventPathMigrated:
		if c.probe == nil {
			return
		}
		if c.path != nil {
			// The socket of an earlier migration: late datagrams
			// may still come on it.
			c.oldPaths = append(c.oldPaths, c.path)
		}
		c.path, c.probe = c.probe, nil
		c.probeDone <- nil
		c.probeDone = nil
	case core.EventPathProbeFailed:
		if c.probe == nil {
			return
		}
		// Migrate stops reading the socket.
		c.probe = nil
		c.probeDone <- ev.Err
		c.probeDone = nil
	}
}

// setRemote records the peer's new address, the only one a Stateless
// Reset for c is taken from (transport_resets.go), and counts c under it;
// c.mu is held.
func (c *Conn) setRemote(addr netip.AddrPort) {
	if addr == c.remote {
		return
	}
	t := c.t
	t.mu.Lock()
	t.removePeerLocked(c)
	c.remote = addr
	t.addPeerLocked(c)
	t.mu.Unlock()
}

// sendProbes sends the core's probe datagrams from the socket under
// probe; c.mu is held. There is one per probe timeout at most.
func (c *Conn) sendProbes(now time.Duration) {
	if c.probe == nil {
		return
	}
	for {
		d, ok := c.core.NextProbeDatagram(now, nil)
		if !ok {
			return
		}
		c.probe.send([]udp.Message{{Data: d.Data, Addr: d.Addr, ECN: d.ECN}})
	}
}

// stopPaths stops reading the sockets of migrations when the connection
// ends.
func (c *Conn) stopPaths() {
	c.mu.Lock()
	sockets := append(c.oldPaths, c.path, c.probe)
	c.path, c.probe, c.oldPaths = nil, nil, nil
	c.mu.Unlock()
	for _, s := range sockets {
		if s != nil {
			s.stop()
		}
	}
}

// pathSocket is a socket one connection reads and sends on after, or
// while, it migrates there.
type pathSocket struct {
	io       *udp.Conn
	stopping atomic.Bool
	stopOnce chan struct{} // holds a token until the first stop
	done     chan struct{} // closed when the reader returns
}

// newPathSocket wraps pc and starts its reader, which hands every
// datagram to c.
func newPathSocket(pc net.PacketConn, c *Conn) (*pathSocket, error) {
	return newReadingSocket(pc, func(m *udp.Message) { c.deliver(m.Data, m.Addr, m.ECN) })
}

// newReadingSocket wraps pc and starts its reader, which hands every
// datagram to handle.
func newReadingSocket(pc net.PacketConn, handle func(m *udp.Message)) (*pathSocket, error) {
	s, err := wrapPathSocket(pc)
	if err != nil {
		return nil, err
	}
	s.start(handle)
	return s, nil
}

// wrapPathSocket wraps pc for batched I/O; start starts its reader.
func wrapPathSocket(pc net.PacketConn) (*pathSocket, error) {
	if pc == nil {
		return nil, errors.New("nil socket")
	}
	io, err := udp.New(pc, udp.Options{MaxDatagramSize: maxPacketSize})
	if err != nil {
		return nil, err
	}
	s := &pathSocket{io: io, stopOnce: make(chan struct{}, 1), done: make(chan struct{})}
	s.stopOnce <- struct{}{}
	return s, nil
}

// start starts the reader, which hands every datagram to handle.
func (s *pathSocket) start(handle func(m *udp.Message)) { go s.readLoop(handle) }

// readLoop hands the socket's datagrams to handle until stopped or
// broken.
func (s *pathSocket) readLoop(handle func(m *udp.Message)) {
	defer close(s.done)
	msgs := s.io.NewReadBatch(smallReadBatch)
	failures := 0
	for {
		n, err := s.io.ReadBatch(msgs)
		for i := range n {
			if m := &msgs[i]; len(m.Data) > 0 && !m.Truncated {
				handle(m)
			}
		}
		switch {
		case err == nil:
			failures = 0
		case s.stopping.Load() || errors.Is(err, net.ErrClosed):
			return
		default:
			// An ICMP report or a passing error: give up only on a
			// socket that keeps failing.
			if failures++; failures >= maxReadErrors {
				return
			}
		}
	}
}

// send writes datagrams; one the socket refuses is skipped, as lost.
func (s *pathSocket) send(msgs []udp.Message) {
	for len(msgs) > 0 {
		n, err := s.io.WriteBatch(msgs)
		if err == nil || errors.Is(err, net.ErrClosed) {
			return
		}
		msgs = msgs[min(n+1, len(msgs)):]
	}
}

// stop ends the reader and leaves the socket open, without a deadline.
func (s *pathSocket) stop() {
	select {
	case <-s.stopOnce:
	default:
		<-s.done
		return
	}
	s.stopping.Store(true)
	_ = s.io.SetReadDeadline(time.Unix(1, 0))
	<-s.done
	_ = s.io.SetReadDeadline(time.Time{})
}
