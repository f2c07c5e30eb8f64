package quic

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
)

// DialAddr opens a connection to addr ("host:port") from a UDP socket of
// its own, which closes with the connection. The TLS server name defaults
// to the host. It returns once the handshake completed.
func DialAddr(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return dialAddr(ctx, addr, tlsConf, conf, false)
}

// DialAddrEarly is DialAddr without waiting for the handshake, as
// Transport.DialEarly.
func DialAddrEarly(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return dialAddr(ctx, addr, tlsConf, conf, true)
}

func dialAddr(ctx context.Context, addr string, tlsConf *tls.Config, conf *Config, early bool) (*Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("quic: %w", err)
	}
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("quic: %w", err)
	}
	network := "udp6"
	if ua.IP.To4() != nil {
		network = "udp4"
	}
	pc, err := net.ListenPacket(network, ":0")
	if err != nil {
		return nil, fmt.Errorf("quic: %w", err)
	}
	t := &Transport{Conn: pc, singleUse: true, ownsConn: true}
	c, err := t.dialMaybeEarly(ctx, ua, withServerName(tlsConf, host), conf, early)
	if err != nil {
		if t.io != nil {
			_ = t.Close()
		} else {
			_ = pc.Close()
		}
		return nil, err
	}
	return c, nil
}

// Dial opens a connection to addr over pc, which the connection uses alone
// and leaves open when it closes. It returns once the handshake completed.
func Dial(ctx context.Context, pc net.PacketConn, addr net.Addr, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return dialOn(ctx, pc, addr, tlsConf, conf, false)
}

// DialEarly is Dial without waiting for the handshake, as
// Transport.DialEarly.
func DialEarly(ctx context.Context, pc net.PacketConn, addr net.Addr, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return dialOn(ctx, pc, addr, tlsConf, conf, true)
}

func dialOn(ctx context.Context, pc net.PacketConn, addr net.Addr, tlsConf *tls.Config, conf *Config, early bool) (*Conn, error) {
	t := &Transport{Conn: pc, singleUse: true}
	c, err := t.dialMaybeEarly(ctx, addr, tlsConf, conf, early)
	if err != nil {
		_ = t.closeIfStarted()
		return nil, err
	}
	return c, nil
}

// DialEarly opens a connection to addr and returns at once, before the
// handshake: the application may open streams and write right away. If
// tlsConf's ClientSessionCache holds a session ticket of the server that
// allows 0-RTT, the data goes with the first flight, in 0-RTT packets
// (RFC 9001 section 4.6): a request is answered a round trip earlier.
// Should the server refuse the early data, it is sent again after the
// handshake; nothing is lost. Without such a ticket, streams open once
// the handshake completed (OpenStreamSync waits; OpenStream fails with
// ErrStreamLimit). HandshakeComplete tells when the handshake is done,
// ConnectionState().Used0RTT whether the server took the early data.
// 0-RTT data can be replayed by an attacker: send early only requests
// that are safe to repeat. ctx bounds the start of the connection; the
// handshake is bounded by Config.HandshakeTimeout.
func (t *Transport) DialEarly(ctx context.Context, addr net.Addr, tlsConf *tls.Config, conf *Config) (*Conn, error) {
	return t.dial(ctx, addr, tlsConf, conf, true)
}

// dialMaybeEarly is Dial or DialEarly.
func (t *Transport) dialMaybeEarly(ctx context.Context, addr net.Addr, tlsConf *tls.Config, conf *Config, early bool) (*Conn, error) {
	if early {
		return t.DialEarly(ctx, addr, tlsConf, conf)
	}
	return t.Dial(ctx, addr, tlsConf, conf)
}

// withServerName fills in the TLS server name from the host dialed.
func withServerName(tlsConf *tls.Config, host string) *tls.Config {
	if tlsConf == nil || tlsConf.ServerName != "" {
		return tlsConf
	}
	t := tlsConf.Clone()
	t.ServerName = host
	return t
}
