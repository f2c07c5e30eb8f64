package gateway

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// TestPacketsBothWays: a client gets an address of the pool and the
// pool's route, an inner MTU of at least 1280 from path MTU discovery on
// loopback, and packets cross the tunnel both ways over real sockets,
// with FEC negotiated.
func TestPacketsBothWays(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken})
	ct, err := g.dial(t, testToken)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if len(ct.Prefixes) != 1 || !testPool.Contains(ct.Prefixes[0].Addr()) || ct.Prefixes[0].Addr() == testServer {
		t.Fatalf("assigned %v, want one address of %v other than the server's", ct.Prefixes, testPool)
	}
	if want := connectip.RouteFromPrefix(testPool, 0); len(ct.Routes) != 1 || ct.Routes[0] != want {
		t.Fatalf("routes %v, want %v", ct.Routes, want)
	}
	if ct.MTU < minTunnelMTU {
		t.Fatalf("inner MTU %d", ct.MTU)
	}
	dev := forward(t, ct)
	me := ct.Prefixes[0].Addr()

	const n = 200
	for i := range n {
		dev.Inject <- tunneltest.IPv4Packet(me, testServer, 1000, uint32(i))
		p := g.dev.Expect(t)
		if tunneltest.Seq(p) != uint32(i) || len(p) != 1000 {
			t.Fatalf("server got packet %d of %d bytes, want %d", tunneltest.Seq(p), len(p), i)
		}
		g.dev.Inject <- tunneltest.IPv4Packet(testServer, me, ct.MTU, uint32(i))
		if p := dev.Expect(t); tunneltest.Seq(p) != uint32(i) || len(p) != ct.MTU {
			t.Fatalf("client got packet %d of %d bytes, want %d", tunneltest.Seq(p), len(p), i)
		}
	}
	if st := g.srv.Stats(); st.Clients != 1 || len(st.Tunnel.Sessions) != 1 || st.Tunnel.Sessions[0].Received.Packets != n || st.Tunnel.Sessions[0].Sent.Packets != n {
		t.Errorf("server stats %+v", st)
	}
	if ct.PathTooSmall() != 0 {
		t.Errorf("%d packets did not fit the path", ct.PathTooSmall())
	}
	if cs := ct.ConnStats(); !cs.FEC.Enabled || cs.FEC.SourcesSent == 0 {
		t.Errorf("FEC not in use: %+v", cs.FEC)
	}
}

// TestUnauthenticatedRefused: without a token the server answers 401,
// with a wrong one 403, and Dial says so.
func TestUnauthenticatedRefused(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken})
	for _, c := range []struct{ token, status string }{{"", "401"}, {"wrong", "403"}} {
		_, err := g.dial(t, c.token)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.status) {
			t.Errorf("token %q: Dial error %v, want a refusal with %s", c.token, err, c.status)
		}
	}
	if st := g.srv.Stats(); st.Refused != 2 || st.Clients != 0 {
		t.Errorf("server stats %+v", st)
	}
}

// TestTwoClients: two clients get distinct addresses, and the server's
// device reaches each by its address.
func TestTwoClients(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken})
	a, err := g.dial(t, testToken)
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.dial(t, testToken)
	if err != nil {
		t.Fatal(err)
	}
	addrA, addrB := a.Prefixes[0].Addr(), b.Prefixes[0].Addr()
	if addrA == addrB {
		t.Fatalf("both clients got %v", addrA)
	}
	devA, devB := forward(t, a), forward(t, b)
	g.dev.Inject <- tunneltest.IPv4Packet(testServer, addrB, 100, 2)
	g.dev.Inject <- tunneltest.IPv4Packet(testServer, addrA, 100, 1)
	if p := devA.Expect(t); tunneltest.Seq(p) != 1 {
		t.Errorf("client A got packet %d", tunneltest.Seq(p))
	}
	if p := devB.Expect(t); tunneltest.Seq(p) != 2 {
		t.Errorf("client B got packet %d", tunneltest.Seq(p))
	}
	// A packet for an address nobody holds is dropped and counted.
	g.dev.Inject <- tunneltest.IPv4Packet(testServer, netip.MustParseAddr("10.77.0.99"), 100, 3)
	eventually(t, "the packet to nobody counted", func() bool { return g.srv.Stats().NoClient == 1 })
	if st := g.srv.Stats(); st.Clients != 2 {
		t.Errorf("server stats %+v", st)
	}
}

// TestSpoofedSourceDropped: a client that puts another source than its
// address in a datagram (bypassing its own session's checks) has the
// packet dropped and counted by the server, and what it sends from its
// own address still goes through.
func TestSpoofedSourceDropped(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := tunnelURL(g.url)
	if err != nil {
		t.Fatal(err)
	}
	ct := &ClientTunnel{}
	ct.tr = ct.newTransport(DialOptions{TLSConfig: testkit.ClientTLS("localhost")})
	defer ct.tr.Close()
	st, err := ct.connect(ctx, u, testToken)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The first capsule is the server's ADDRESS_ASSIGN.
	c, err := connectip.NewCapsuleReader(st).Next()
	if err != nil || c.Type != connectip.CapsuleAddressAssign {
		t.Fatalf("first capsule %#x, %v", c.Type, err)
	}
	assigned, err := connectip.ParseAddressAssign(c.Payload)
	if err != nil || len(assigned) != 1 {
		t.Fatalf("assigned %v, %v", assigned, err)
	}
	me := assigned[0].Prefix.Addr()
	spoofed := netip.MustParseAddr("10.77.0.200")
	if err := st.SendDatagram(connectip.AppendDatagram(nil, connectip.ContextIDIP, tunneltest.IPv4Packet(spoofed, testServer, 200, 1))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the spoofed packet counted", func() bool {
		st := g.srv.Stats().Tunnel
		return len(st.Sessions) == 1 && st.Sessions[0].Received.Dropped.SourceNotAllowed == 1
	})
	if err := st.SendDatagram(connectip.AppendDatagram(nil, connectip.ContextIDIP, tunneltest.IPv4Packet(me, testServer, 200, 2))); err != nil {
		t.Fatal(err)
	}
	if p := g.dev.Expect(t); tunneltest.Seq(p) != 2 {
		t.Fatalf("server device got packet %d, want only the unspoofed one", tunneltest.Seq(p))
	}
}

// TestDialErrors: bad URLs and servers that are not there give errors.
func TestDialErrors(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, u := range []string{"http://example.com", "https://", "::"} {
		if _, err := Dial(ctx, u, DialOptions{}); err == nil || !strings.Contains(err.Error(), "URL") {
			t.Errorf("Dial(%q): %v", u, err)
		}
	}
}

// TestNewServerErrors: a server refuses a configuration that would admit
// nobody, or that has no addresses to give.
func TestNewServerErrors(t *testing.T) {
	dev := tunneltest.NewDevice(1500)
	for name, cfg := range map[string]ServerConfig{
		"no credentials": {Pool: []netip.Prefix{testPool}},
		"no pool":        {Token: "x"},
		"local outside":  {Token: "x", Pool: []netip.Prefix{testPool}, Local: []netip.Addr{netip.MustParseAddr("10.1.0.1")}},
	} {
		if _, err := NewServer(dev, cfg); err == nil {
			t.Errorf("%s: NewServer accepted %+v", name, cfg)
		}
	}
}

// TestDualStackPool: a pool of both IP versions gives each client one
// address of each, and the routes of both.
func TestDualStackPool(t *testing.T) {
	v6 := netip.MustParsePrefix("fd77::/120")
	g := startServer(t, ServerConfig{
		Token: testToken,
		Pool:  []netip.Prefix{testPool, v6},
		Local: []netip.Addr{testServer, netip.MustParseAddr("fd77::1")},
	})
	ct, err := g.dial(t, testToken)
	if err != nil {
		t.Fatal(err)
	}
	if len(ct.Prefixes) != 2 || !testPool.Contains(ct.Prefixes[0].Addr()) || !v6.Contains(ct.Prefixes[1].Addr()) ||
		ct.Prefixes[1].Addr() == netip.MustParseAddr("fd77::1") || ct.Prefixes[1].Bits() != 128 {
		t.Errorf("assigned %v", ct.Prefixes)
	}
	if len(ct.Routes) != 2 {
		t.Errorf("routes %v", ct.Routes)
	}
}

// TestQUICConfigFECOverhead: a tunnel's connection caps FEC repairs at a
// tenth of the bytes sent unless its configuration says otherwise, and
// the caller's configuration is not changed.
func TestQUICConfigFECOverhead(t *testing.T) {
	if got := QUICConfig(nil).FEC; got == nil || got.MaxOverhead != DefaultFECMaxOverhead || got.Policy != quic.FECAuto {
		t.Errorf("default FEC %+v, want the auto policy capped at %v", got, DefaultFECMaxOverhead)
	}
	fixed := &quic.Config{FEC: &quic.FECConfig{Controller: quic.FECFixed}}
	if got := QUICConfig(fixed).FEC; got.MaxOverhead != DefaultFECMaxOverhead || got.Controller != quic.FECFixed {
		t.Errorf("FEC %+v, want the fixed controller capped at %v", got, DefaultFECMaxOverhead)
	}
	if fixed.FEC.MaxOverhead != 0 {
		t.Errorf("the caller's configuration changed: %+v", fixed.FEC)
	}
	if got := QUICConfig(&quic.Config{FEC: &quic.FECConfig{MaxOverhead: 0.3}}).FEC.MaxOverhead; got != 0.3 {
		t.Errorf("a configured cap became %v", got)
	}
	if got := QUICConfig(&quic.Config{}).FEC; got != nil {
		t.Errorf("FEC %+v for a configuration without it", got)
	}
}
