package gateway

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

const testToken = "s3cret-token"

var (
	testPool   = netip.MustParsePrefix("10.77.0.0/24")
	testServer = netip.MustParseAddr("10.77.0.1")
)

// testGateway is a Server on a loopback socket with an in-memory device.
type testGateway struct {
	srv  *Server
	dev  *tunneltest.Device
	url  string
	stop func()
}

func startServer(t testing.TB, cfg ServerConfig) *testGateway {
	t.Helper()
	return startServerQUIC(t, cfg, nil)
}

// startServerQUIC is startServer with the QUIC configuration qconf.
func startServerQUIC(t testing.TB, cfg ServerConfig, qconf *quic.Config) *testGateway {
	t.Helper()
	return startServerOn(t, tunneltest.NewDevice(1500), cfg, qconf)
}

// startServerOn is startServerQUIC on the device dev.
func startServerOn(t testing.TB, dev *tunneltest.Device, cfg ServerConfig, qconf *quic.Config) *testGateway {
	t.Helper()
	return startServerDevice(t, dev, dev, cfg, testkit.ServerTLS("h3"), qconf)
}

// startServerDevice is startServerOn on the device dev, whose packets
// written and to inject are mem's, with the TLS configuration tlsConf.
func startServerDevice(t testing.TB, dev tunnel.Device, mem *tunneltest.Device, cfg ServerConfig, tlsConf *tls.Config, qconf *quic.Config) *testGateway {
	t.Helper()
	testkit.CheckGoroutines(t)
	if cfg.Pool == nil {
		cfg.Pool = []netip.Prefix{testPool}
		cfg.Local = []netip.Addr{testServer}
	}
	srv, err := NewServer(dev, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &testGateway{srv: srv, dev: mem, url: "https://" + pc.LocalAddr().String()}
	g.stop = serveGateway(t, srv, pc, tlsConf, qconf)
	return g
}

// serveGateway runs srv on pc until the returned stop, which the end of
// the test calls too, and returns once it listens.
func serveGateway(t testing.TB, srv *Server, pc net.PacketConn, tlsConf *tls.Config, qconf *quic.Config) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- srv.Serve(ctx, pc, tlsConf, qconf, func(net.Addr) { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Serve: %v", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// dial opens a client tunnel to g with token.
func (g *testGateway) dial(t testing.TB, token string) (*ClientTunnel, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ct, err := Dial(ctx, g.url, DialOptions{Token: token, TLSConfig: testkit.ClientTLS("localhost")})
	if err == nil {
		t.Cleanup(func() { _ = ct.Close() })
	}
	return ct, err
}

// forward runs a tunnel.Forwarder between ct and a new in-memory device
// until the test ends.
func forward(t testing.TB, ct *ClientTunnel) *tunneltest.Device {
	t.Helper()
	dev := tunneltest.NewDevice(ct.MTU)
	fwd := tunnel.New(dev, ct.Session, tunnel.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fwd.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("client forwarder: %v", err)
		}
	})
	return dev
}

// eventually polls cond until it holds or 10 s passed.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
