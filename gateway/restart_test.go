package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// mutePacketConn drops what is written once muted: a server process that
// died sends nothing more, not even its CONNECTION_CLOSE.
type mutePacketConn struct {
	net.PacketConn
	muted atomic.Bool
}

func (m *mutePacketConn) WriteTo(p []byte, a net.Addr) (int, error) {
	if m.muted.Load() {
		return len(p), nil
	}
	return m.PacketConn.WriteTo(p, a)
}

// serveUntil runs a gateway on pc with cfg until the returned stop.
func serveUntil(t *testing.T, pc net.PacketConn, cfg ServerConfig) (stop func()) {
	t.Helper()
	return serveTLSUntil(t, pc, cfg, testkit.ServerTLS("h3"))
}

// serveTLSUntil is serveUntil with the TLS configuration tlsConf.
func serveTLSUntil(t *testing.T, pc net.PacketConn, cfg ServerConfig, tlsConf *tls.Config) (stop func()) {
	t.Helper()
	cfg.Pool, cfg.Local = []netip.Prefix{testPool}, []netip.Addr{testServer}
	srv, err := NewServer(tunneltest.NewDevice(1500), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return serveGateway(t, srv, pc, tlsConf, nil)
}

// TestRestartResetsClients: a server that died and came back on the same
// port with the same StatelessResetKey answers the next packet of a
// client of its last run with a stateless reset that the client
// recognises (RFC 9000 section 10.3): the client learns at once that its
// tunnel is gone, rather than after its idle timeout (30 s).
func TestRestartResetsClients(t *testing.T) {
	testkit.CheckGoroutines(t)
	key := &quic.StatelessResetKey{7, 7, 7}
	cfg := ServerConfig{Token: testToken, StatelessResetKey: key}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := udp.LocalAddr().String()
	first := &mutePacketConn{PacketConn: udp}
	stopFirst := serveUntil(t, first, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ct, err := Dial(ctx, "https://"+addr, DialOptions{Token: testToken, TLSConfig: testkit.ClientTLS("localhost")})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer func() { _ = ct.Close() }()
	first.muted.Store(true) // the server dies
	stopFirst()
	udp2, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Skipf("the port was taken in between: %v", err)
	}
	defer serveUntil(t, udp2, cfg)()
	start := time.Now()
	me := ct.Prefixes[0].Addr()
	for seq := uint32(0); ct.conn.Context().Err() == nil && time.Since(start) < 10*time.Second; seq++ {
		if _, err := ct.Session.WritePacket(tunneltest.IPv4Packet(me, testServer, 1000, seq)); err != nil {
			break
		}
		select {
		case <-ct.conn.Context().Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	cause := context.Cause(ct.conn.Context())
	var reset *quic.StatelessResetError
	if !errors.As(cause, &reset) {
		t.Fatalf("after %v the client's connection ended with %v, want a stateless reset", time.Since(start), cause)
	}
	t.Logf("reset recognised %v after the first packet to the restarted server", time.Since(start))
}
