package http3

import (
	"context"
	"crypto/tls"
	"net/http"

	"github.com/satquic/satquic/quic"
)

// 0-RTT (RFC 9114 section 10.9, RFC 9001 section 4.6). A Transport whose
// TLSClientConfig has a ClientSessionCache holding a ticket of the server
// that allows early data dials with quic.DialAddrEarly: its control
// stream and its first requests leave with the ClientHello, and a server
// that accepts them (quic.Config.Allow0RTT on an early Listener) answers
// a round trip earlier. Early data can be replayed by an attacker (RFC
// 9001 section 9.2, RFC 8470 section 1), so only requests with a safe
// method go early; any other waits until the handshake completed. If the
// server rejects the early data, the quic package sends it again after the
// handshake, on the same streams: the requests go on, a round trip later.
//
// A Server on an early Listener reads requests that came in 0-RTT before
// the handshake completes. It runs the handler at once for a safe method,
// with Request.TLS.HandshakeComplete false so that the handler can tell
// (and answer 425 Too Early, RFC 8470 section 5.2, if it must not act on a
// replay). A request with another method waits for the handshake: an
// attacker replaying a captured flight never completes it, so such a
// request never runs from a replay (RFC 8470 section 3 lets a server
// delay early requests so).

// safeMethod reports whether a request's method is safe (RFC 9110 section
// 9.2.1): repeating it asks the server for nothing beyond what one did.
func safeMethod(m string) bool {
	switch m {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// earlyDataTicket reports whether tlsConf's session cache holds a ticket
// for its server that allows 0-RTT.
func earlyDataTicket(tlsConf *tls.Config) bool {
	if tlsConf.ClientSessionCache == nil {
		return false
	}
	cs, ok := tlsConf.ClientSessionCache.Get(tlsConf.ServerName)
	if !ok || cs == nil {
		return false
	}
	_, st, err := cs.ResumptionState()
	return err == nil && st != nil && st.EarlyData
}

// handshakeDone reports whether qc's handshake completed.
func handshakeDone(qc *quic.Conn) bool {
	select {
	case <-qc.HandshakeComplete():
		return true
	default:
		return false
	}
}

// waitHandshake waits until qc's handshake completed, qc closed or ctx
// ended; it reports whether the handshake completed.
func waitHandshake(ctx context.Context, qc *quic.Conn) bool {
	select {
	case <-qc.HandshakeComplete():
		return true
	case <-qc.Context().Done():
	case <-ctx.Done():
	}
	return handshakeDone(qc)
}
