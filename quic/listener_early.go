package quic

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// An early Listener (ListenEarly) hands a connection to Accept as soon as
// the server has its 1-RTT keys, right after it answered the client's
// first flight, instead of a round trip later when the client's Finished
// arrives. A client resuming with 0-RTT sends its request with its first
// flight; the application then reads it and answers at once, and the
// answer leaves as 0.5-RTT data with the server's handshake flight (RFC
// 9001 section 4.1.1), within the anti-amplification limit. On a GEO path
// that saves the 600 ms the request would otherwise wait. Without 0-RTT
// nothing changes but the moment of Accept: the connection's stream data
// waits for the handshake, as the core sends 0.5-RTT data only after it
// accepted 0-RTT.
//
// An early connection stays among the Listener's handshakes until its
// handshake completes: it counts against MaxHandshakes and
// MaxHandshakesPerIP, a new client may take its place once it has been
// silent for a probe timeout, and Config.HandshakeTimeout ends it. One
// source can thus make the server hold, beyond its established
// connections, at most twice MaxHandshakesPerIP connections that never
// complete (with and without an address validation token), each for at
// most the handshake timeout, and all sources together, with forged
// addresses, at most Config.MaxUnvalidatedHandshakes (128 by default)
// without a token (beyond, clients get a Retry, which a forged address
// never answers); what the application does with them meanwhile (the
// requests they carried in 0-RTT) is its own to bound.
//
// Replay (RFC 9001 section 9.2, RFC 8446 section 8): 0-RTT data is not
// protected against replay. An attacker who captured a client's first
// flight can send it again, to this server or another sharing its ticket
// keys, and each copy is accepted as a new connection whose requests the
// application reads before the handshake, which the attacker can never
// complete, fails. The Listener does not detect replays. An application
// that accepts 0-RTT (Config.Allow0RTT) must process early only requests
// whose repetition does no harm, and hold the others until
// HandshakeComplete is closed: after that, the peer is known to have the
// session's keys and the data is not a replay. ConnectionState().Used0RTT
// tells whether the client sent 0-RTT data.

// ListenEarly is Listen with early accept: Accept returns a connection
// before its handshake completes, as soon as the server can read the
// client's 0-RTT data and send 0.5-RTT data. Conn.HandshakeComplete tells
// when the handshake completed; if it fails, the connection's Context
// ends. Enable 0-RTT with Config.Allow0RTT, and mind its replays (see
// Config.Allow0RTT).
func (t *Transport) ListenEarly(tlsConf *tls.Config, conf *Config) (*Listener, error) {
	return t.listen(tlsConf, conf, true)
}

// ListenAddrEarly is ListenAddr with early accept, as
// Transport.ListenEarly.
func ListenAddrEarly(addr string, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("quic: %w", err)
	}
	t := &Transport{Conn: pc, singleUse: true, ownsConn: true}
	l, err := t.ListenEarly(tlsConf, conf)
	if err != nil {
		_ = t.closeIfStarted()
		_ = pc.Close()
	}
	return l, err
}

// ListenEarly is Listen with early accept, as Transport.ListenEarly.
func ListenEarly(pc net.PacketConn, tlsConf *tls.Config, conf *Config) (*Listener, error) {
	t := &Transport{Conn: pc, singleUse: true}
	l, err := t.ListenEarly(tlsConf, conf)
	if err != nil {
		_ = t.closeIfStarted()
	}
	return l, err
}

// Early reports whether Accept hands out connections before their
// handshake completes (ListenEarly).
func (l *Listener) Early() bool { return l.early }

// promote counts an early connection whose handshake completed among the
// established connections. Whether the Listener is still open does not
// matter: the application holds the connection.
func (l *Listener) promote(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.slot.state == slotHandshake {
		l.establish(c.slot, l.t.now())
	}
}

// offerEarly hands a server connection of an early Listener to Accept
// once the core can read 0-RTT data and answer it; c.mu is held. A
// connection the Listener no longer takes (it closed, or evicted the
// connection) is closed.
func (c *Conn) offerEarly(now time.Duration) {
	if c.l == nil || !c.l.early || c.enqueued || c.err != nil || !c.core.HalfRTTReady() {
		return
	}
	c.enqueued = c.l.enqueue(c, false)
	if !c.enqueued {
		c.core.Close(now, 0, "server closed")
	}
}

// onServerHandshakeComplete gives a server connection to its Listener: to
// Accept, or, if an early Listener handed it out already, among the
// established connections; c.mu is held.
func (c *Conn) onServerHandshakeComplete(now time.Duration) {
	if c.l == nil {
		return
	}
	if c.enqueued {
		c.l.promote(c)
		return
	}
	c.enqueued = c.l.enqueue(c, true)
	if !c.enqueued {
		c.core.Close(now, 0, "server closed")
	}
}
