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
	// state is the connection's TLS state, kept when a server lets go of
	// its QUICConn once the handshake is over (finish).
	state *tls.ConnectionState
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
	if h.conn == nil {
		return tls.QUICEvent{}, false
	}
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
	if h.conn == nil {
		// A server whose handshake is over expects no more handshake
		// messages: a client sends none after its Finished in QUIC (RFC
		// 9001 section 4.1.2), and TLS would refuse one the same way.
		return tls.AlertError(alertUnexpectedMessage)
	}
	return h.conn.HandleData(levelOfSpace(s), data)
}

// alertUnexpectedMessage is TLS's unexpected_message alert (RFC 8446
// section 6).
const alertUnexpectedMessage = 10

// connectionState is the TLS state of the connection.
func (h *tlsHandshake) connectionState() tls.ConnectionState {
	if h.state != nil {
		return *h.state
	}
	return h.conn.ConnectionState()
}

// finish lets a server's QUICConn go once the handshake is over and its
// session ticket is written: nothing it holds (the record layer's
// ciphers, the handshake buffers, the transcript) serves the connection
// any more, and an idle connection is smaller by about a third without
// them. The TLS state is kept for ConnectionState. A client keeps its
// QUICConn: session tickets may come at any time.
func (h *tlsHandshake) finish() {
	if h.conn == nil {
		return
	}
	st := h.conn.ConnectionState()
	h.state = &st
	h.release()
	h.conn = nil
}

// storeSession stores a copy of a client's session ticket s with the
// entries extra (resume.go) in the TLS ClientSessionCache. The copy
// leaves alone a ticket the cache holds already, which another
// connection may be reading.
func (h *tlsHandshake) storeSession(s *tls.SessionState, extra [][]byte) error {
	if h.conn == nil {
		return nil
	}
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
