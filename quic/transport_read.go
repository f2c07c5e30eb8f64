package quic

import (
	"crypto/rand"
	"errors"
	"net"
	"net/netip"
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/udp"
	"github.com/satquic/satquic/quic/internal/wire"
)

const (
	// readBatchSize is how many datagrams one ReadBatch may return once
	// the socket is busy; a Transport starts with smallReadBatch. With
	// GRO, every four messages of a batch come with a 64 KiB buffer: the
	// full batch holds 1 MiB, which a client connection that only shakes
	// hands and exchanges a request (DialAddr opens a Transport for each)
	// would allocate, clear and leave to the garbage collector for nothing.
	readBatchSize  = 64
	smallReadBatch = 4
	// maxReadErrors is how many consecutive read errors (other than a
	// closed socket) end the Transport, rather than spinning on a broken
	// socket.
	maxReadErrors = 64
	// maxStatelessResetLen bounds the Stateless Resets sent: a short
	// datagram suffices, and it is never larger than the packet that
	// triggered it (RFC 9000 section 10.3.3), so two endpoints without
	// state cannot reset each other forever.
	maxStatelessResetLen = 64
)

// readLoop is the reading goroutine of one of the Transport's sockets: it
// receives batches and hands each datagram to its connection. It reads
// small batches until one comes back full, a sign that datagrams queue up
// in the socket, and from then on full ones.
func (t *Transport) readLoop(s *socket) {
	defer t.readers.Done()
	slots := newRxSlots(s.io, smallReadBatch, nil)
	defer func() { slots.close() }()
	var out inboxBatch
	failures := 0
	for {
		slots.prepare(s.io)
		n, err := s.io.ReadBatch(slots.msgs)
		slots.count(n)
		for i := range n {
			t.handleDatagram(s, slots, &slots.msgs[i], &out)
		}
		out.flush()
		if n == len(slots.msgs) && n < readBatchSize && !s.io.Pending() {
			// Once the socket has nothing left in the small batch's
			// buffers: each message names its buffer by index in
			// the batch it was read into.
			slots = newRxSlots(s.io, readBatchSize, slots)
		}
		if err == nil {
			failures = 0
			continue
		}
		if t.isClosing() || errors.Is(err, net.ErrClosed) {
			t.shutdown(ErrTransportClosed)
			return
		}
		// A read error on an unconnected UDP socket is usually an ICMP
		// report for one peer: the others go on.
		if failures++; failures >= maxReadErrors {
			t.shutdown(err)
			return
		}
	}
}

// inboxBatch gathers a reader's packets for one connection, handed over
// together when the batch ends or a datagram for anything else comes.
type inboxBatch struct {
	conn *Conn
	pkts []*packet
	// The last route looked up in this batch: the datagrams of a GRO
	// buffer share their connection ID.
	lastCID  wire.ConnectionID
	lastConn *Conn
}

func (b *inboxBatch) add(c *Conn, p *packet) {
	if c != b.conn {
		b.flush()
		b.conn = c
	}
	b.pkts = append(b.pkts, p)
}

// flush hands the gathered packets to their connection and forgets the
// batch's route, which may change before the next batch.
func (b *inboxBatch) flush() {
	if len(b.pkts) > 0 {
		holdChunks(b.pkts)
		b.conn.deliverPackets(b.pkts)
	}
	b.pkts = b.pkts[:0]
	b.conn, b.lastConn, b.lastCID = nil, nil, wire.ConnectionID{}
}

// route returns the connection of dcid, or nil.
func (t *Transport) route(dcid wire.ConnectionID, b *inboxBatch) *Conn {
	if b.lastConn != nil && dcid == b.lastCID {
		return b.lastConn
	}
	t.mu.RLock()
	c := t.routes[dcid]
	t.mu.RUnlock()
	b.lastCID, b.lastConn = dcid, c
	return c
}

// handleDatagram routes one datagram received on s by its Destination
// Connection ID (RFC 9000 section 5.2). A datagram for a connection
// joins the batch out, by reference to its read buffer when slots say
// so; anything else first hands over what out holds, so that each
// connection sees its datagrams in the order they came.
func (t *Transport) handleDatagram(s *socket, slots *rxSlots, m *udp.Message, out *inboxBatch) {
	data := m.Data
	if len(data) == 0 || m.Truncated {
		return
	}
	long := wire.IsLongHeader(data[0])
	var dcid wire.ConnectionID
	if long {
		h, _, err := wire.ParseInvariantLongHeader(data)
		if err != nil {
			return
		}
		if dcid, err = wire.NewConnectionID(h.DstConnID); err != nil {
			// Longer than any version this endpoint speaks allows.
			t.sendVersionNegotiation(s, m)
			return
		}
	} else {
		if len(data) < 1+t.cidLen {
			return
		}
		dcid, _ = wire.NewConnectionID(data[1 : 1+t.cidLen])
	}
	c := t.route(dcid, out)
	s.countDatagram(c)
	c.heard()
	if c != nil {
		var p *packet
		if chunk := slots.byReference(m); chunk != nil {
			p = t.refPacket(data, chunk, m.Addr, m.ECN)
		} else {
			p = t.getPacket(data, m.Addr, m.ECN)
		}
		out.add(c, p)
		return
	}
	out.flush()
	switch {
	case long:
		t.handleNewLong(s, m)
	case len(data) >= crypto.MinStatelessResetLen && t.offerReset(data, m.Addr):
	default:
		t.sendStatelessReset(s, m, dcid)
	}
}

// offerReset hands an unroutable short-header datagram to the connection
// whose peer gave the reset token it ends with, if that peer sent it: a
// Stateless Reset (RFC 9000 section 10.3.1, transport_resets.go), which
// the connection's core checks again. It reports whether the sender is
// the peer of any connection: a datagram from a peer with connections is
// never answered with a reset of our own, so two endpoints cannot reset
// each other in turn.
func (t *Transport) offerReset(data []byte, from netip.AddrPort) bool {
	var buf [1]*Conn
	conns, peer := t.resetTarget(data, from, buf[:0])
	for _, c := range conns {
		c.deliver(data, from, ecn.NotECT)
	}
	return peer
}

// handleNewLong handles a long-header datagram for no connection: at a
// listening Transport, a client's first Initial, answered without keeping
// any state unless it opens a connection, which belongs to s.
func (t *Transport) handleNewLong(s *socket, m *udp.Message) {
	t.mu.RLock()
	l := t.listener
	t.mu.RUnlock()
	if l == nil {
		return
	}
	if h, _, err := wire.ParseInvariantLongHeader(m.Data); err != nil || !l.acceptsVersion(h.Version) {
		t.sendVersionNegotiation(s, m)
		return
	}
	info, err := core.PeekInitial(m.Data)
	if err != nil {
		return
	}
	t.acceptConn(s, l, info, m.Data, m.Addr, m.ECN)
}

// acceptConn starts a server connection for a client's first Initial,
// unless the client must first prove its address (RFC 9000 section 8.1):
// then a Retry packet answers it, and the connection starts when its
// Initial comes back with the Retry's token. A token that does not
// validate ends the attempt (INVALID_TOKEN, section 8.1.2). The
// connection belongs to s, the socket its Initial arrived on.
func (t *Transport) acceptConn(s *socket, l *Listener, info core.InitialInfo, data []byte, from netip.AddrPort, cp ecn.Codepoint) {
	now := t.now()
	params, err := l.validator.Check(info, from, now)
	switch {
	case errors.Is(err, core.ErrInvalidToken):
		l.counters.invalidTokens.Add(1)
		t.refuse(s, info, from, wire.CodeInvalidToken, "invalid token")
		return
	case err != nil:
		return
	}
	if !params.AddressValidated && l.wantsRetry(from) {
		t.sendRetry(s, l, info, from, now)
		return
	}
	// The connection a new one replaces is evicted once t.mu is
	// released: evicting takes that connection's lock.
	var ev eviction
	defer func() { ev.run() }()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.listener != l {
		return
	}
	adm, slot, ev := l.admit(from, params.AddressValidated)
	switch adm {
	case admitNone:
		return
	case admitFull:
		t.refuse(s, info, from, wire.CodeConnectionRefused, "too many connections")
		return
	case admitRetry:
		t.sendRetry(s, l, info, from, now)
		return
	}
	cfg := l.cfg
	cfg.NewConnID = t.cids.generator(s.index)
	qlog := newQlogSink(&l.conf, false)
	if qlog != nil {
		cfg.Qlog = qlog
	}
	cc, err := core.NewServerConn(&cfg, now, params)
	if err != nil {
		l.leave(slot)
		if !params.AddressValidated {
			l.handshakeOver()
		}
		return
	}
	qlog.attach(params.OriginalDestConnID)
	c := newConn(t, cc, l, info.Version)
	c.sock = s
	s.stats.connections.Add(1)
	c.qlog = qlog
	c.unvalidated = !params.AddressValidated
	c.slot, slot.c = slot, c
	// The client's Initials carry this connection ID until it learns
	// ours: its first choice, or after a Retry the Retry's.
	c.odcid, c.hasODCID = cc.InitialDestConnID(), true
	t.routes[c.odcid] = c
	c.deliver(data, from, cp)
	t.startConnLocked(c)
}

// sendRetry answers a client's first Initial with a Retry packet (RFC
// 9000 section 8.1.2), which keeps no state at the server: the token
// carries what the connection needs when the client comes back.
func (t *Transport) sendRetry(s *socket, l *Listener, info core.InitialInfo, to netip.AddrPort, now time.Duration) {
	b, err := l.validator.Retry(nil, info, to, now)
	if err != nil {
		return
	}
	l.counters.retries.Add(1)
	t.writeRaw(s, b, to)
}

// refuse ends a connection attempt without state: an Initial packet with
// CONNECTION_CLOSE and a transport error code (RFC 9000 section 10.2.3).
func (t *Transport) refuse(s *socket, info core.InitialInfo, to netip.AddrPort, code uint64, reason string) {
	b, err := core.RefuseInitial(nil, info, code, reason)
	if err != nil {
		return
	}
	t.writeRaw(s, b, to)
}

// sendStatelessReset answers a short-header packet for an unknown
// connection with a Stateless Reset (RFC 9000 section 10.3), so that a peer
// whose connection this endpoint forgot learns it at once instead of
// waiting for its idle timeout.
func (t *Transport) sendStatelessReset(s *socket, m *udp.Message, dcid wire.ConnectionID) {
	size := min(len(m.Data)-1, maxStatelessResetLen)
	if size < crypto.MinStatelessResetLen {
		return
	}
	tok, err := t.resetKey.Token(dcid.Bytes())
	if err != nil {
		return
	}
	b := make([]byte, size)
	if _, err := rand.Read(b[:size-len(tok)]); err != nil {
		return
	}
	// A short header's fixed bit set, the rest unpredictable (section
	// 10.3).
	b[0] = b[0]&^0x80 | 0x40
	copy(b[size-len(tok):], tok[:])
	t.writeRaw(s, b, m.Addr)
}

// sendVersionNegotiation answers a long-header packet of a version the
// Listener does not accept (RFC 9000 section 6.1), listing those it does.
// Only a listening Transport answers, and only datagrams that could carry
// a client's first Initial (1200 bytes or more), so that the answer never
// amplifies.
func (t *Transport) sendVersionNegotiation(s *socket, m *udp.Message) {
	t.mu.RLock()
	l := t.listener
	t.mu.RUnlock()
	if l == nil {
		return
	}
	if b, ok := core.VersionNegotiation(nil, m.Data, l.versions); ok {
		t.writeRaw(s, b, m.Addr)
	}
}

// writeRaw sends one datagram from a reader, on s, the socket the
// datagram it answers came to: the peer expects the answer from the
// address it sent to, which for a server's preferred address
// (transport_preferred.go) is not the first socket's. A client that moved
// there takes a Stateless Reset only from there (RFC 9000 section
// 10.3.1).
func (t *Transport) writeRaw(s *socket, b []byte, to netip.AddrPort) {
	msg := []udp.Message{{Data: b, Addr: to}}
	s.writeMu.Lock()
	_, _ = s.io.WriteBatch(msg)
	s.writeMu.Unlock()
}
