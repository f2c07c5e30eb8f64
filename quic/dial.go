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
	c, err := t.Dial(ctx, ua, withServerName(tlsConf, host), conf)
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
	t := &Transport{Conn: pc, singleUse: true}
	c, err := t.Dial(ctx, addr, tlsConf, conf)
	if err != nil {
		_ = t.closeIfStarted()
		return nil, err
	}
	return c, nil
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
