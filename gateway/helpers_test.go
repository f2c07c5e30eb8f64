package gateway

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel"
)

// memDevice is an in-memory tunnel.Device: the test plays the kernel,
// putting packets in inject and taking what the tunnel writes from
// written.
type memDevice struct {
	mtu     int
	inject  chan []byte
	written chan []byte
	done    chan struct{}
	once    sync.Once
}

func newMemDevice(mtu int) *memDevice {
	return &memDevice{mtu: mtu, inject: make(chan []byte, 64), written: make(chan []byte, 1024), done: make(chan struct{})}
}

func (d *memDevice) ReadPacket(b []byte) (int, error) {
	select {
	case p := <-d.inject:
		return copy(b, p), nil
	case <-d.done:
		return 0, errors.New("device closed")
	}
}

func (d *memDevice) WritePacket(p []byte) error {
	select {
	case d.written <- append([]byte(nil), p...):
		return nil
	case <-d.done:
		return errors.New("device closed")
	}
}

func (d *memDevice) MTU() int { return d.mtu }

func (d *memDevice) Close() error {
	d.once.Do(func() { close(d.done) })
	return nil
}

// expect waits for the next packet the tunnel wrote into d.
func (d *memDevice) expect(t testing.TB) []byte {
	t.Helper()
	select {
	case p := <-d.written:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no packet came out of the tunnel")
		return nil
	}
}

// udpPacket builds an IPv4 packet of protocol UDP and size bytes from src
// to dst, carrying seq in its last four bytes.
func udpPacket(src, dst netip.Addr, size int, seq uint32) []byte {
	p := make([]byte, size)
	p[0], p[8], p[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(p[2:4], uint16(size))
	s, d := src.As4(), dst.As4()
	copy(p[12:16], s[:])
	copy(p[16:20], d[:])
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(p[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(p[10:12], ^uint16(sum))
	binary.BigEndian.PutUint32(p[size-4:], seq)
	return p
}

// seqOf is the number udpPacket put in p.
func seqOf(p []byte) uint32 { return binary.BigEndian.Uint32(p[len(p)-4:]) }

const testToken = "s3cret-token"

var (
	testPool   = netip.MustParsePrefix("10.77.0.0/24")
	testServer = netip.MustParseAddr("10.77.0.1")
)

// testGateway is a Server on a loopback socket with an in-memory device.
type testGateway struct {
	srv  *Server
	dev  *memDevice
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
	return startServerOn(t, newMemDevice(1500), cfg, qconf)
}

// startServerOn is startServerQUIC on the device dev.
func startServerOn(t testing.TB, dev *memDevice, cfg ServerConfig, qconf *quic.Config) *testGateway {
	t.Helper()
	return startServerDevice(t, dev, dev, cfg, testkit.ServerTLS("h3"), qconf)
}

// startServerDevice is startServerOn on the device dev, whose packets
// written and to inject are mem's, with the TLS configuration tlsConf.
func startServerDevice(t testing.TB, dev tunnel.Device, mem *memDevice, cfg ServerConfig, tlsConf *tls.Config, qconf *quic.Config) *testGateway {
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
func forward(t testing.TB, ct *ClientTunnel) *memDevice {
	t.Helper()
	dev := newMemDevice(ct.MTU)
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
