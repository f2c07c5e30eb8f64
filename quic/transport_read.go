package quic

import (
	"crypto/rand"
	"errors"
	"net"
	"net/netip"
	"slices"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/udp"
	"github.com/satquic/satquic/quic/internal/wire"
)

const (
	// readBatchSize is how many datagrams one ReadBatch may return.
	readBatchSize = 64
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

// readLoop is the Transport's one reading goroutine: it receives batches
// and hands each datagram to its connection.
func (t *Transport) readLoop() {
	defer close(t.readerDone)
	msgs := t.io.NewReadBatch(readBatchSize)
	failures := 0
	for {
		n, err := t.io.ReadBatch(msgs)
		for i := range n {
			t.handleDatagram(&msgs[i])
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

// handleDatagram routes one received datagram by its Destination
// Connection ID (RFC 9000 section 5.2).
func (t *Transport) handleDatagram(m *udp.Message) {
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
		if h.Version != wire.VersionNegotiationVersion && !h.Version.IsSupported() {
			t.sendVersionNegotiation(m, &h)
			return
		}
		if dcid, err = wire.NewConnectionID(h.DstConnID); err != nil {
			return
		}
	} else {
		if len(data) < 1+t.cidLen {
			return
		}
		dcid, _ = wire.NewConnectionID(data[1 : 1+t.cidLen])
	}
	t.mu.RLock()
	c := t.routes[dcid]
	t.mu.RUnlock()
	switch {
	case c != nil:
		c.deliver(data, m.Addr)
	case long:
		t.acceptConn(data, m.Addr)
	case len(data) >= crypto.MinStatelessResetLen && t.offerReset(data, m.Addr):
	default:
		t.sendStatelessReset(m, dcid)
	}
}

// offerReset hands an unroutable short-header datagram to the connections
// to its sender, which recognize a Stateless Reset by its token (RFC 9000
// section 10.3.1). It reports whether there were any: a datagram from a
// peer with connections is never answered with a reset of our own, so two
// endpoints cannot reset each other in turn.
func (t *Transport) offerReset(data []byte, from netip.AddrPort) bool {
	t.mu.RLock()
	conns := slices.Clone(t.byPeer[from])
	t.mu.RUnlock()
	for _, c := range conns {
		c.deliver(data, from)
	}
	return len(conns) > 0
}

// acceptConn starts a server connection for a client's first Initial.
func (t *Transport) acceptConn(data []byte, from netip.AddrPort) {
	info, err := core.PeekInitial(data)
	if err != nil {
		return
	}
	t.mu.Lock()
	l := t.listener
	if t.closed || l == nil || !l.admit() {
		// Nobody to accept it, or too many waiting: the client retries
		// or times out.
		t.mu.Unlock()
		return
	}
	cc, err := core.NewServerConn(&l.cfg, t.now(), core.ServerParams{
		RemoteAddr:         from,
		OriginalDestConnID: info.DstConnID,
		Version:            info.Version,
	})
	if err != nil {
		l.release()
		t.mu.Unlock()
		return
	}
	c := newConn(t, cc, l, info.Version)
	// The client's Initials carry its chosen connection ID until it
	// learns ours.
	t.routes[info.DstConnID] = c
	c.odcid, c.hasODCID = info.DstConnID, true
	c.deliver(data, from)
	t.startConnLocked(c)
	t.mu.Unlock()
}

// sendStatelessReset answers a short-header packet for an unknown
// connection with a Stateless Reset (RFC 9000 section 10.3), so that a peer
// whose connection this endpoint forgot learns it at once instead of
// waiting for its idle timeout.
func (t *Transport) sendStatelessReset(m *udp.Message, dcid wire.ConnectionID) {
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
	t.writeRaw(b, m.Addr)
}

// sendVersionNegotiation answers a long-header packet of a version this
// endpoint does not speak (RFC 9000 section 6.1), when it could open a
// connection: only a listening Transport answers, and only datagrams of
// at least 1200 bytes, so that the answer never amplifies.
func (t *Transport) sendVersionNegotiation(m *udp.Message, h *wire.InvariantLongHeader) {
	t.mu.RLock()
	listening := t.listener != nil
	t.mu.RUnlock()
	if !listening || len(m.Data) < wire.MinMaxUDPPayloadSize {
		return
	}
	var r [1]byte
	_, _ = rand.Read(r[:])
	vn := wire.VersionNegotiation{
		DstConnID: h.SrcConnID,
		SrcConnID: h.DstConnID,
		Versions:  []wire.Version{wire.Version1, wire.Version2},
	}
	b, err := wire.AppendVersionNegotiation(nil, &vn, r[0])
	if err != nil {
		return
	}
	t.writeRaw(b, m.Addr)
}

// writeRaw sends one datagram from the reader.
func (t *Transport) writeRaw(b []byte, to netip.AddrPort) {
	msg := []udp.Message{{Data: b, Addr: to}}
	t.writeMu.Lock()
	_, _ = t.io.WriteBatch(msg)
	t.writeMu.Unlock()
}
