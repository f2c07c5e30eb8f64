package core

import (
	"context"
	"crypto/tls"
	"fmt"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// tlsHandshake is a connection's TLS 1.3 handshake (RFC 9001 section 4):
// crypto/tls's QUICConn, which runs the handshake in a goroutine of its own
// until the handshake ends or the QUICConn is closed. It is fed the
// peer's CRYPTO data and reports its events one at a time; the connection
// dispatches them (drainTLS in handshake.go).
type tlsHandshake struct {
	conn *tls.QUICConn
	// released: the QUICConn was closed (release).
	released bool
}

// start starts the handshake q of an endpoint whose transport parameters
// are local. A client's go in its ClientHello; a server gives its own when
// TLS asks for them, after the client's, which compatible version
// negotiation may make it change (RFC 9368 section 2.3).
func (h *tlsHandshake) start(q *tls.QUICConn, local *wire.TransportParameters, isClient bool) error {
	h.conn = q
	if isClient {
		if err := h.setTransportParams(local, isClient); err != nil {
			return fmt.Errorf("quic core: transport parameters: %w", err)
		}
	}
	if err := q.Start(context.Background()); err != nil {
		return fmt.Errorf("quic core: TLS start: %w", err)
	}
	return nil
}

// nextEvent returns the next event TLS has ready; ok is false when there
// is none.
func (h *tlsHandshake) nextEvent() (ev tls.QUICEvent, ok bool) {
	ev = h.conn.NextEvent()
	return ev, ev.Kind != tls.QUICNoEvent
}

// setTransportParams gives TLS the transport parameters local of a client
// or a server, to carry in its quic_transport_parameters extension (RFC
// 9001 section 8.2).
func (h *tlsHandshake) setTransportParams(local *wire.TransportParameters, isClient bool) error {
	raw, err := local.Append(nil, perspective(isClient))
	if err != nil {
		return err
	}
	h.conn.SetTransportParameters(raw)
	return nil
}

// handleData gives TLS in-order CRYPTO data of space s.
func (h *tlsHandshake) handleData(s recovery.Space, data []byte) error {
	return h.conn.HandleData(levelOfSpace(s), data)
}

// storeSession stores a copy of a client's session ticket s with the
// entries extra (resume.go) in the TLS ClientSessionCache. The copy
// leaves alone a ticket the cache holds already, which another
// connection may be reading.
func (h *tlsHandshake) storeSession(s *tls.SessionState, extra [][]byte) error {
	cp := *s
	cp.Extra = extra
	return h.conn.StoreSession(&cp)
}

// release closes the QUICConn, which ends its goroutine; it is
// idempotent.
func (h *tlsHandshake) release() {
	if h.released {
		return
	}
	h.released = true
	if h.conn != nil {
		_ = h.conn.Close()
	}
}
