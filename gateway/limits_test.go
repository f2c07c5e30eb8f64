package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// rawClient opens tunnels on one QUIC connection to g, without starting
// their CONNECT-IP sessions: what a hostile client holding a valid
// credential does.
type rawClient struct {
	ct  *ClientTunnel
	url string
}

func newRawClient(t *testing.T, g *testGateway) *rawClient {
	t.Helper()
	ct := &ClientTunnel{}
	ct.tr = ct.newTransport(DialOptions{TLSConfig: testkit.ClientTLS("localhost")})
	t.Cleanup(func() { _ = ct.tr.Close() })
	return &rawClient{ct: ct, url: g.url}
}

// open sends one extended CONNECT with token and returns its stream.
func (c *rawClient) open(t *testing.T, token string, wait time.Duration) (*http3.Stream, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	u, err := tunnelURL(c.url)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.ct.connect(ctx, u, token)
	if err == nil {
		t.Cleanup(func() { _ = st.Close() })
	}
	return st, err
}

// mustOpen opens a tunnel the server must accept.
func (c *rawClient) mustOpen(t *testing.T, token string) *http3.Stream {
	t.Helper()
	st, err := c.open(t, token, 20*time.Second)
	if err != nil {
		t.Fatalf("tunnel with token %q refused: %v", token, err)
	}
	return st
}

// mustRefuse opens a tunnel the server must refuse with status.
func (c *rawClient) mustRefuse(t *testing.T, token, status string) {
	t.Helper()
	_, err := c.open(t, token, 20*time.Second)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), status) {
		t.Fatalf("tunnel with token %q: %v, want a refusal with %s", token, err, status)
	}
}

// waitTunnels waits until g holds n tunnels and n client addresses.
func waitTunnels(t *testing.T, g *testGateway, n int) {
	t.Helper()
	eventually(t, "the tunnels and addresses counted", func() bool {
		return g.srv.Stats().Clients == n && g.srv.pool.InUse() == n+1 && g.srv.counts.open() == n
	})
}

// TestTunnelsPerClientBounded: a holder of one token opens at most
// MaxTunnelsPerClient tunnels, even on one connection; the next is
// answered 429 and counted, takes no address, and another token is
// another client. A tunnel that ends gives its place back.
func TestTunnelsPerClientBounded(t *testing.T) {
	g := startServer(t, ServerConfig{Tokens: []string{"alice", "bob"}, MaxTunnelsPerClient: 3, MaxTunnelsPerSource: -1})
	c := newRawClient(t, g)
	var alice []*http3.Stream
	for range 3 {
		alice = append(alice, c.mustOpen(t, "alice"))
	}
	c.mustRefuse(t, "alice", "429")
	c.mustRefuse(t, "alice", "429")
	c.mustOpen(t, "bob")
	waitTunnels(t, g, 4)
	if st := g.srv.Stats(); st.OverClientLimit != 2 || st.OverSourceLimit != 0 || st.Refused != 0 || st.PoolExhausted != 0 {
		t.Errorf("server stats %+v", st)
	}
	_ = alice[0].Close()
	waitTunnels(t, g, 3)
	c.mustOpen(t, "alice")
	waitTunnels(t, g, 4)
}

// TestTunnelsPerSourceBounded: clients with tokens of their own, all from
// one address, open at most MaxTunnelsPerSource tunnels together.
func TestTunnelsPerSourceBounded(t *testing.T) {
	g := startServer(t, ServerConfig{Tokens: []string{"a", "b", "c"}, MaxTunnelsPerSource: 2})
	c := newRawClient(t, g)
	c.mustOpen(t, "a")
	newRawClient(t, g).mustOpen(t, "b")
	c.mustRefuse(t, "c", "429")
	waitTunnels(t, g, 2)
	if st := g.srv.Stats(); st.OverSourceLimit != 1 || st.OverClientLimit != 0 {
		t.Errorf("server stats %+v", st)
	}
}

// TestDefaultTunnelLimits: the zero configuration bounds a token to
// DefaultMaxTunnelsPerClient tunnels.
func TestDefaultTunnelLimits(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken})
	c := newRawClient(t, g)
	for range DefaultMaxTunnelsPerClient {
		c.mustOpen(t, testToken)
	}
	c.mustRefuse(t, testToken, "429")
	waitTunnels(t, g, DefaultMaxTunnelsPerClient)
	if st := g.srv.Stats(); st.OverClientLimit != 1 {
		t.Errorf("server stats %+v", st)
	}
}

// TestStreamsPerConnBounded: one connection has at most
// DefaultMaxStreamsPerConn requests under way; the next waits for a
// stream that QUIC does not grant.
func TestStreamsPerConnBounded(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken, MaxTunnelsPerClient: -1, MaxTunnelsPerSource: -1})
	c := newRawClient(t, g)
	for range DefaultMaxStreamsPerConn {
		c.mustOpen(t, testToken)
	}
	if _, err := c.open(t, testToken, 1500*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("request beyond the connection's streams: %v, want it to wait for a stream", err)
	}
	waitTunnels(t, g, DefaultMaxStreamsPerConn)
}

// TestPoolDoesNotDrain: tunnels opened and ended again and again, by
// closing their stream or their whole connection, give their addresses
// back: every round fills the pool exactly, and the one request beyond it
// is answered 503.
func TestPoolDoesNotDrain(t *testing.T) {
	small := netip.MustParsePrefix("10.77.0.0/29") // .1 the server's, .2 to .7 the clients'
	const clients = 6
	g := startServer(t, ServerConfig{
		Token: testToken, Pool: []netip.Prefix{small}, Local: []netip.Addr{testServer},
		MaxTunnelsPerClient: -1, MaxTunnelsPerSource: -1,
	})
	const rounds = 8
	for round := range rounds {
		byStream, byConn := newRawClient(t, g), newRawClient(t, g)
		var streams []*http3.Stream
		for i := range clients {
			if i%2 == 0 {
				streams = append(streams, byStream.mustOpen(t, testToken))
			} else {
				byConn.mustOpen(t, testToken)
			}
		}
		byStream.mustRefuse(t, testToken, "503")
		waitTunnels(t, g, clients)
		for _, st := range streams {
			_ = st.Close()
		}
		_ = byConn.ct.tr.Close()
		waitTunnels(t, g, 0)
		if st := g.srv.Stats(); st.PoolExhausted != uint64(round+1) {
			t.Fatalf("round %d: %d refused for want of an address, want %d", round, st.PoolExhausted, round+1)
		}
	}
}

// TestIdentities: each token and each verified client certificate is a
// client of its own; the same credential on another request is the same
// client.
func TestIdentities(t *testing.T) {
	srv, err := NewServer(tunneltest.NewDevice(1500), ServerConfig{
		Tokens: []string{"alice", "bob"}, ClientCertificates: true,
		Pool: []netip.Prefix{testPool}, Local: []netip.Addr{testServer},
	})
	if err != nil {
		t.Fatal(err)
	}
	ca := newTestCA(t)
	withToken := func(tok string) *http.Request {
		r := httptest.NewRequest(http.MethodConnect, "https://localhost/", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		return r
	}
	withCert := func(name string) *http.Request {
		der := ca.issue(t, name).Certificate[0]
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodConnect, "https://localhost/", nil)
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert, ca.cert}}}
		return r
	}
	idOf := func(r *http.Request) identity {
		t.Helper()
		id, status, why := srv.admit(r)
		if status != 0 {
			t.Fatalf("refused %d: %s", status, why)
		}
		return id
	}
	alice, bob := idOf(withToken("alice")), idOf(withToken("bob"))
	one, two := idOf(withCert("one")), idOf(withCert("two"))
	if idOf(withToken("alice")) != alice || alice == bob || one == two || one == alice {
		t.Errorf("identities not told apart: %x %x %x %x", alice[:4], bob[:4], one[:4], two[:4])
	}
	if _, status, _ := srv.admit(withToken("mallory")); status != http.StatusForbidden {
		t.Errorf("unknown token: status %d", status)
	}
	if _, err := NewServer(tunneltest.NewDevice(1500), ServerConfig{Tokens: []string{""}, Pool: []netip.Prefix{testPool}}); err == nil {
		t.Error("NewServer accepted an empty token")
	}
}

// TestSourceOf: a source is an IPv4 address (also IPv4-mapped) or an
// IPv6 /64, whatever the port.
func TestSourceOf(t *testing.T) {
	for addr, want := range map[string]string{
		"192.0.2.7:4433":          "192.0.2.7/32",
		"[::ffff:192.0.2.7]:1":    "192.0.2.7/32",
		"[2001:db8:1:2:3::9]:443": "2001:db8:1:2::/64",
		"[fe80::1%eth0]:443":      "fe80::/64",
	} {
		if got := sourceOf(addr); got != netip.MustParsePrefix(want) {
			t.Errorf("sourceOf(%q) = %v, want %v", addr, got, want)
		}
	}
	if got := sourceOf("pipe"); got.IsValid() {
		t.Errorf("sourceOf(pipe) = %v, want none", got)
	}
}

// TestGoroutinesPerTunnel: a tunnel costs two goroutines (its session's
// capsule reader and the mux's reader of its packets) on top of its
// connection's; the client here starts no session, so ten more tunnels
// on one connection add about twenty, whatever the timers of the moment.
func TestGoroutinesPerTunnel(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken, MaxTunnelsPerClient: -1})
	c := newRawClient(t, g)
	c.mustOpen(t, testToken)
	waitTunnels(t, g, 1)
	// The fewest goroutines over a few samples: short-lived ones (a
	// timer's function, a context's AfterFunc, the runtime's) come and
	// go on a busy machine, the tunnels' stay.
	settle := func() int {
		least := math.MaxInt
		for range 5 {
			time.Sleep(50 * time.Millisecond)
			least = min(least, runtime.NumGoroutine())
		}
		return least
	}
	before := settle()
	const more = 10
	for range more {
		c.mustOpen(t, testToken)
	}
	waitTunnels(t, g, 1+more)
	if added := settle() - before; added > 2*more+3 {
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Errorf("%d tunnels added %d goroutines, want about %d; goroutines now:\n%s", more, added, 2*more, stacks.String())
	}
}

// TestListenerLimitsApply: the QUIC listener's per-source bounds hold
// for the gateway: with two connections per source, a third client from
// the same address is refused before any request.
func TestListenerLimitsApply(t *testing.T) {
	g := startServerQUIC(t, ServerConfig{Token: testToken, MaxTunnelsPerClient: -1}, &quic.Config{MaxConnectionsPerIP: 2})
	newRawClient(t, g).mustOpen(t, testToken)
	newRawClient(t, g).mustOpen(t, testToken)
	_, err := newRawClient(t, g).open(t, testToken, 20*time.Second)
	var te *quic.TransportError
	const connectionRefused = 0x02 // RFC 9000 section 20.1
	if !errors.As(err, &te) || !te.Remote || te.ErrorCode != connectionRefused {
		t.Fatalf("third connection from one source: %v, want CONNECTION_REFUSED", err)
	}
	waitTunnels(t, g, 2)
}
