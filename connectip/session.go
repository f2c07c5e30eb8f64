package connectip

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sync"
)

// ErrClosed is returned by a session's methods after Close.
var ErrClosed = errors.New("connectip: session closed")

// ErrDropped wraps the error WritePacket returns for a packet it did not
// send: malformed, outside the addresses or routes, too big, or out of
// hops. Such a packet is counted in Stats; the session goes on.
var ErrDropped = errors.New("packet dropped")

var errPeerClosed = errors.New("the peer closed the stream")

// defaultMTU is the tunnel MTU when Config.MTU is zero: the minimum IPv6
// link MTU (RFC 9484 section 7.2 requires at least this much).
const defaultMTU = 1280

// maxAddressRequests bounds the Request IDs one session accepts, so that a
// peer sending ADDRESS_REQUEST capsules without end costs bounded memory.
const maxAddressRequests = 1024

// Config holds what client and proxy sessions share.
type Config struct {
	// MTU is the largest IP packet the tunnel carries: what fits in one
	// HTTP Datagram after its Context ID. A larger packet given to
	// WritePacket is dropped and answered with an ICMP Packet Too Big.
	// Zero means 1280. Below 1280 a session refuses to carry IPv6 (RFC
	// 9484 section 7.2), below 68 anything.
	MTU int
	// ICMPSource4 and ICMPSource6 are the sources of the ICMP errors the
	// session generates. Unset, an ICMP error comes from the destination
	// of the packet it is about (see PacketTooBig).
	ICMPSource4, ICMPSource6 netip.Addr
	// KeepHopLimit leaves the TTL and Hop Limit of sent packets as they
	// are, for an endpoint whose kernel routes and decrements them already.
	// By default the session acts as a router and decrements them before
	// encapsulation (RFC 9484 section 7.2).
	KeepHopLimit bool
}

// Session is one end of a CONNECT-IP tunnel over a Carrier: a client
// (NewClient) or a proxy (NewProxy). Its methods are safe for concurrent
// use; ReadPacket and WritePacket may run at the same time as each other.
type Session struct {
	c      Carrier
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	stats  counters
	// waits: WritePackets and GivePackets wait for room in the carrier's
	// send queue (SendDatagramsWait, GivePrefixedDatagramsWait) rather
	// than have it drop older datagrams. A
	// client does: its carrier carries only its own device's packets,
	// whose local senders are then held back rather than see loss. A
	// proxy does not: one client's full queue must not stall a device
	// shared with others.
	waits bool

	wmu sync.Mutex // serializes capsule writes

	mu sync.Mutex
	// local is what the peer assigned to this end (the sources this end may
	// use); peerRoutes what the peer advertised (its destinations).
	local          []AssignedAddress
	peerRoutes     []IPRoute
	peerAdvertised bool
	// assigned is what this end assigned to the peer, routes what it
	// advertised to it: the checks of packets received.
	assigned     []AssignedAddress
	assignedSent bool
	routes       []IPRoute
	advertised   bool
	// requestsSent is how many addresses this end requested (Request IDs
	// 1 to requestsSent); answered holds those of them the peer answered,
	// and nothing else, so that a peer cannot grow it. requested holds the
	// Request IDs the peer sent.
	requestsSent        uint64
	answered, requested map[uint64]bool
	gotAssign           bool
	changed             chan struct{} // closed and replaced on every change
	handlers            map[uint64]func([]byte)
	pool                *AddressPool
	pooled              map[byte]netip.Prefix // by IP version

	done      chan struct{} // closed when the capsule loop ends
	closeOnce sync.Once
	closeErr  error // why the session ended; ErrClosed after Close
	bufs      sync.Pool
	// readBufs hold whole received datagrams, for a carrier that copies
	// them out (datagramReader).
	readBufs sync.Pool
	// batches are the *PacketBatch LendPackets lends, given back by
	// Release (packets_lent.go).
	batches sync.Pool
}

func newSession(c Carrier, cfg Config) *Session {
	if cfg.MTU <= 0 {
		cfg.MTU = defaultMTU
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		c: c, cfg: cfg, ctx: ctx, cancel: cancel,
		answered: make(map[uint64]bool), requested: make(map[uint64]bool),
		changed: make(chan struct{}), handlers: make(map[uint64]func([]byte)),
		pooled: make(map[byte]netip.Prefix), done: make(chan struct{}),
	}
	s.bufs.New = func() any { b := make([]byte, 0, cfg.MTU+8); return &b }
	s.readBufs.New = func() any { b := make([]byte, maxDatagram); return &b }
	return s
}

// start runs the capsule loop.
func (s *Session) start() { go s.readCapsules() }

// LocalPrefixes is what the peer assigned to this end: the sources its
// packets may use. A client gets its addresses here.
func (s *Session) LocalPrefixes() []netip.Prefix {
	s.mu.Lock()
	defer s.mu.Unlock()
	return prefixes(s.local)
}

// Routes is what the peer advertised: the destinations this end's packets
// may go to.
func (s *Session) Routes() []IPRoute {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]IPRoute(nil), s.peerRoutes...)
}

// AssignedPrefixes is what this end assigned to the peer: the sources the
// peer's packets may use. A proxy sees its client's addresses here.
func (s *Session) AssignedPrefixes() []netip.Prefix {
	s.mu.Lock()
	defer s.mu.Unlock()
	return prefixes(s.assigned)
}

func prefixes(as []AssignedAddress) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(as))
	for _, a := range as {
		out = append(out, a.Prefix)
	}
	return out
}

// Stats returns a snapshot of the session's counters.
func (s *Session) Stats() Stats { return s.stats.snapshot() }

// HandleContext registers fn for the HTTP Datagrams of Context ID id (not
// 0, which carries IP packets): an extension that registered the context
// with the peer receives their payloads there, on the goroutine calling
// ReadPacket. Datagrams of a context without a handler are dropped and
// counted (RFC 9484 section 6).
func (s *Session) HandleContext(id uint64, fn func(payload []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[id] = fn
}

// Done is closed when the session has ended: closed, its carrier gone, or
// a protocol error from the peer (see Err).
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is why the session ended, or nil while it runs. It is set before
// any method reports the end, and before Done is closed.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeErr
}

// Close ends the session: it closes the carrier and gives back the
// addresses it took from a pool.
func (s *Session) Close() error {
	var err error
	s.closeOnce.Do(func() { err = s.shutdown(ErrClosed) })
	<-s.done
	return err
}

// fail ends the session because of err.
func (s *Session) fail(err error) {
	s.closeOnce.Do(func() { _ = s.shutdown(err) })
}

func (s *Session) shutdown(reason error) error {
	s.mu.Lock()
	s.closeErr = reason
	for v, p := range s.pooled {
		s.pool.Release(p)
		delete(s.pooled, v)
	}
	s.mu.Unlock()
	s.cancel()
	return s.c.Close()
}

// sessionErr is the error a read or write returns once the session ended.
func (s *Session) sessionErr(err error) error {
	if s.ctx.Err() != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closeErr != nil {
			return s.closeErr
		}
		return ErrClosed
	}
	return err
}

// notify wakes those waiting for a change of addresses or routes; s.mu is
// held.
func (s *Session) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// writeCapsule sends one encoded capsule on the stream.
func (s *Session) writeCapsule(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.c.Write(b); err != nil {
		return s.sessionErr(fmt.Errorf("connectip: writing a capsule: %w", err))
	}
	return nil
}

// readCapsules handles the peer's capsules until the stream ends or one
// is malformed, which ends the session (RFC 9297 section 3.3).
func (s *Session) readCapsules() {
	defer close(s.done)
	r := NewCapsuleReader(s.c)
	for {
		c, err := r.Next()
		if err != nil {
			if errors.Is(err, ErrCapsuleTooLarge) {
				s.stats.badCapsules.Add(1)
			}
			if errors.Is(err, io.EOF) {
				err = errPeerClosed
			}
			s.fail(fmt.Errorf("connectip: capsule stream: %w", err))
			return
		}
		s.stats.capsules.Add(1)
		if err := s.handleCapsule(c); err != nil {
			if errors.Is(err, ErrMalformed) {
				s.stats.badCapsules.Add(1)
			}
			s.fail(fmt.Errorf("connectip: %w", err))
			return
		}
	}
}

func (s *Session) handleCapsule(c Capsule) error {
	switch c.Type {
	case CapsuleAddressAssign:
		addrs, err := ParseAddressAssign(c.Payload)
		if err != nil {
			return err
		}
		s.onAssign(addrs)
		return nil
	case CapsuleAddressRequest:
		reqs, err := ParseAddressRequest(c.Payload)
		if err != nil {
			return err
		}
		return s.onRequest(reqs)
	case CapsuleRouteAdvertisement:
		routes, err := ParseRouteAdvertisement(c.Payload)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.peerRoutes, s.peerAdvertised = routes, true
		s.notify()
		s.mu.Unlock()
		return nil
	}
	s.stats.ignored.Add(1)
	return nil
}

// onAssign takes the peer's full list of this end's addresses (RFC 9484
// section 4.7.1): rejections answer a request but assign nothing.
func (s *Session) onAssign(addrs []AssignedAddress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.local = s.local[:0]
	for _, a := range addrs {
		if a.RequestID != 0 && a.RequestID <= s.requestsSent {
			s.answered[a.RequestID] = true
		}
		if !a.Rejected() {
			s.local = append(s.local, a)
		}
	}
	s.gotAssign = true
	s.notify()
}
