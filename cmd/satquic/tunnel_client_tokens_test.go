package main

import (
	"context"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/gateway"
	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// retrySender is a server socket that counts the Retry packets it sends.
type retrySender struct {
	net.PacketConn
	retries atomic.Int32
}

func (s *retrySender) WriteTo(p []byte, addr net.Addr) (int, error) {
	if isRetryV1(p) {
		s.retries.Add(1)
	}
	return s.PacketConn.WriteTo(p, addr)
}

// startRetryGateway runs a gateway that asks every client without a
// token to prove its address with a Retry, until the test ends.
func startRetryGateway(t *testing.T, token string) (addr string, sock *retrySender) {
	t.Helper()
	srv, err := gateway.NewServer(tunneltest.NewDevice(1500), gateway.ServerConfig{
		Token: token,
		Pool:  []netip.Prefix{netip.MustParsePrefix("10.78.0.0/24")}, Local: []netip.Addr{netip.MustParseAddr("10.78.0.1")},
	})
	serveMust(t, err)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	serveMust(t, err)
	sock = &retrySender{PacketConn: pc}
	qconf := &quic.Config{RequireAddressValidation: func(net.Addr) bool { return true }}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- srv.Serve(ctx, sock, testkit.ServerTLS("h3"), qconf, func(net.Addr) { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return pc.LocalAddr().String(), sock
}

// TestTunnelClientRedialPresentsToken: the tunnels of one client run
// share their token store, so that a redial presents the token the server
// gave the tunnel before (RFC 9000 section 8.1.3) and a server that asks
// for address validation lets it in without a Retry; a client that made
// each tunnel afresh would meet a Retry on every redial.
func TestTunnelClientRedialPresentsToken(t *testing.T) {
	addr, sock := startRetryGateway(t, "t0ken")
	o, err := tunnelClientFlags([]string{"--server", "https://" + addr, "--token", "t0ken", "--insecure"}, io.Discard)
	serveMust(t, err)
	tlsConf, err := o.tlsConfig()
	serveMust(t, err)
	store := newWatchedTokenStore()
	dial := o.dialer(tlsConf, store)
	for i, wantRetry := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		before := sock.retries.Load()
		ct, err := dial(ctx)
		cancel()
		if err != nil {
			t.Fatalf("tunnel %d: %v", i, err)
		}
		select {
		case <-store.given:
		case <-time.After(10 * time.Second):
			t.Fatalf("tunnel %d: no NEW_TOKEN reached the token store given to the dialer", i)
		}
		_ = ct.Close()
		if retried := sock.retries.Load() > before; retried != wantRetry {
			t.Errorf("tunnel %d: the server sent a Retry: %v, want %v", i, retried, wantRetry)
		}
	}
	if store.presented.Load() != 1 {
		t.Errorf("the client presented %d tokens, want 1: the redial's", store.presented.Load())
	}
}
