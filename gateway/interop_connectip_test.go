package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cipgo "github.com/quic-go/connect-ip-go"
	quicgo "github.com/quic-go/quic-go"
	qghttp3 "github.com/quic-go/quic-go/http3"
	"github.com/yosida95/uritemplate/v3"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// Interop with connect-ip-go (RFC 9484 over quic-go's HTTP/3) both ways:
// satquic's client against connect-ip-go's proxy, and connect-ip-go's
// client against satquic's Server. Each checks the address assignment,
// the routes, and IPv4/UDP packets both ways, byte for byte but for the
// one hop of TTL; and that FEC, which quic-go does not offer, is off.

// interopPackets is how many packets each test sends each way.
const interopPackets = 100

// quicGoMaxPacket bounds the packets quic-go's end sends: quic-go
// starts at 1280-byte QUIC packets and an HTTP datagram of a packet this
// size fits whatever its path MTU discovery found by then.
const quicGoMaxPacket = 1100

var (
	// goPool and goPool6 are what the connect-ip-go proxy assigns and
	// routes: the client gets goClient and goClient6, and the proxy's
	// side is goProxy and goProxy6.
	goPool    = netip.MustParsePrefix("10.88.0.0/24")
	goClient  = netip.MustParsePrefix("10.88.0.2/32")
	goProxy   = netip.MustParseAddr("10.88.0.1")
	goPool6   = netip.MustParsePrefix("fd00:88::/64")
	goClient6 = netip.MustParsePrefix("fd00:88::2/128")
	goProxy6  = netip.MustParseAddr("fd00:88::1")
)

// goProxyServer is connect-ip-go's proxy served by quic-go's HTTP/3
// server on loopback: each accepted tunnel comes out of conns with its
// address assigned and its route advertised.
type goProxyServer struct {
	url   string
	conns chan *cipgo.Conn
}

// startGoProxy starts the proxy; it stops when the test ends.
func startGoProxy(t *testing.T) *goProxyServer {
	t.Helper()
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	// connect-ip-go serves a template without variables, and checks the
	// request's authority against the template's.
	p := &goProxyServer{url: fmt.Sprintf("https://%s/vpn", udp.LocalAddr()), conns: make(chan *cipgo.Conn, 1)}
	template := uritemplate.MustNew(p.url)
	handlersDone := make(chan struct{})
	var handlers sync.WaitGroup
	srv := &qghttp3.Server{
		TLSConfig:       testkit.ServerTLS("h3"),
		EnableDatagrams: true,
		QUICConfig:      &quicgo.Config{EnableDatagrams: true},
		// The end of each test's stream is no news.
		Logger: slog.New(slog.DiscardHandler),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handlers.Add(1)
			defer handlers.Done()
			req, err := cipgo.ParseProxyRequest(r, template)
			if err != nil {
				t.Errorf("connect-ip-go refused the request: %v", err)
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			var proxy cipgo.Proxy
			conn, err := proxy.Proxy(w, req)
			if err != nil {
				t.Errorf("connect-ip-go Proxy: %v", err)
				return
			}
			defer conn.Close()
			if err := conn.AssignAddresses([]netip.Prefix{goClient, goClient6}); err != nil {
				t.Errorf("AssignAddresses: %v", err)
				return
			}
			if err := conn.AdvertiseRoute([]cipgo.IPRoute{
				{StartIP: goPool.Addr(), EndIP: netip.MustParseAddr("10.88.0.255")},
				{StartIP: goPool6.Addr(), EndIP: netip.MustParseAddr("fd00:88::ffff:ffff:ffff:ffff")},
			}); err != nil {
				t.Errorf("AdvertiseRoute: %v", err)
				return
			}
			ctx, cancel := context.WithCancel(context.Background())
			answered := make(chan struct{})
			go func() {
				defer close(answered)
				answerGoRequests(ctx, conn)
			}()
			p.conns <- conn
			<-handlersDone
			cancel()
			<-answered
		}),
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(udp)
	}()
	t.Cleanup(func() {
		close(handlersDone)
		handlers.Wait()
		_ = srv.Close()
		_ = udp.Close()
		<-served
	})
	return p
}

// answerGoRequests answers the client's address requests on c as a
// proxy with one address of each version does: goClient for any IPv4
// request, goClient6 for any IPv6 one.
func answerGoRequests(ctx context.Context, c *cipgo.Conn) {
	for {
		req, err := c.ReceiveAddressRequest(ctx)
		if err != nil {
			return
		}
		answer := make([]netip.Prefix, len(req.Prefixes))
		for i, p := range req.Prefixes {
			answer[i] = goClient6
			if p.Addr().Is4() {
				answer[i] = goClient
			}
		}
		if req.Respond(answer, nil) != nil {
			return
		}
	}
}

// TestInteropClientWithConnectIPGoProxy: Dial against connect-ip-go's
// proxy gets the IPv4 and IPv6 addresses and routes it gave, an inner MTU
// from path MTU discovery against quic-go, no FEC, and IPv4 and IPv6
// packets cross both ways intact.
func TestInteropClientWithConnectIPGoProxy(t *testing.T) {
	testkit.CheckGoroutines(t)
	p := startGoProxy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ct, err := Dial(ctx, p.url, DialOptions{TLSConfig: testkit.ClientTLS("localhost")})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	// Closed after the forwarder stops (cleanups run last first).
	t.Cleanup(func() { _ = ct.Close() })
	var proxy *cipgo.Conn
	select {
	case proxy = <-p.conns:
	case <-ctx.Done():
		t.Fatal("connect-ip-go's proxy did not start the tunnel")
	}
	if want := []netip.Prefix{goClient, goClient6}; !slices.Equal(ct.Prefixes, want) {
		t.Errorf("assigned %v, want %v", ct.Prefixes, want)
	}
	if want := []connectip.IPRoute{connectip.RouteFromPrefix(goPool, 0), connectip.RouteFromPrefix(goPool6, 0)}; !slices.Equal(ct.Routes, want) {
		t.Errorf("routes %v, want %v", ct.Routes, want)
	}
	if ct.MTU < minTunnelMTU {
		t.Errorf("inner MTU %d", ct.MTU)
	}
	if fec := ct.ConnStats().FEC; fec.Enabled || fec.SourcesSent != 0 {
		t.Errorf("FEC with quic-go: %+v", fec)
	}
	dev := forward(t, ct)
	for i := range interopPackets {
		// IPv4 and IPv6 in turn.
		me, there := goClient.Addr(), goProxy
		if i%2 == 1 {
			me, there = goClient6.Addr(), goProxy6
		}
		sent := testUDP(me, there, i, ct.MTU)
		dev.Inject <- slices.Clone(sent)
		if err := checkForwarded(readGoPacket(t, proxy), sent); err != nil {
			t.Fatalf("packet %d to connect-ip-go: %v", i, err)
		}
		sent = testUDP(there, me, i, quicGoMaxPacket)
		if icmp, err := proxy.WritePacket(slices.Clone(sent)); err != nil || icmp != nil {
			t.Fatalf("connect-ip-go WritePacket %d: %v (ICMP %x)", i, err, icmp)
		}
		if err := checkForwarded(dev.Expect(t), sent); err != nil {
			t.Fatalf("packet %d from connect-ip-go: %v", i, err)
		}
	}
	if st := ct.Session.Stats(); st.Sent.Packets != interopPackets || st.Received.Packets != interopPackets {
		t.Errorf("client session stats %+v", st)
	}
}

// TestInteropAddressRequestToConnectIPGoProxy: connectip's client sends
// an ADDRESS_REQUEST for any IPv4 and any IPv6 address to connect-ip-go's
// proxy, and takes its answer, one address of each under the requests'
// IDs (RFC 9484 section 4.7.1).
func TestInteropAddressRequestToConnectIPGoProxy(t *testing.T) {
	testkit.CheckGoroutines(t)
	p := startGoProxy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u, err := tunnelURL(p.url)
	if err != nil {
		t.Fatal(err)
	}
	ct := &ClientTunnel{pathTooSmall: new(atomic.Uint64)}
	ct.tr = ct.newTransport(DialOptions{TLSConfig: testkit.ClientTLS("localhost")})
	defer ct.tr.Close()
	st, err := ct.connect(ctx, u, "")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := connectip.NewClient(newCarrier(st, ct.pathTooSmall, minTunnelMTU), connectip.ClientConfig{
		Config:           connectip.Config{MTU: minTunnelMTU},
		RequestAddresses: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32"), netip.MustParsePrefix("::/128")},
	})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	defer sess.Close()
	if got, want := sess.LocalPrefixes(), []netip.Prefix{goClient, goClient6}; !slices.Equal(got, want) {
		t.Errorf("addresses %v after the request, want %v", got, want)
	}
	select {
	case <-p.conns:
	case <-ctx.Done():
		t.Fatal("connect-ip-go's proxy did not start the tunnel")
	}
}

// readGoPacket reads the next packet connect-ip-go's end received, or
// fails the test after 10 s.
func readGoPacket(t *testing.T, c *cipgo.Conn) []byte {
	t.Helper()
	type result struct {
		p   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b := make([]byte, 2048)
		n, err := c.ReadPacket(b)
		ch <- result{b[:n], err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("connect-ip-go ReadPacket: %v", r.err)
		}
		return r.p
	case <-time.After(10 * time.Second):
		// The reader goroutine ends when the test closes c.
		t.Fatal("no packet reached connect-ip-go")
		return nil
	}
}

// serveRecording runs srv on pc as Serve does, but accepts the QUIC
// connections itself so that the test can read their statistics: each
// comes out of the returned channel. pc is closed when the test ends.
func serveRecording(t *testing.T, srv *Server, pc net.PacketConn) <-chan *quic.Conn {
	t.Helper()
	l, err := quic.Listen(pc, http3.ConfigureTLS(testkit.ServerTLS("h3")), QUICConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	h3 := &http3.Server{Handler: srv, EnableExtendedConnect: true, EnableDatagrams: true}
	ctx, cancel := context.WithCancel(context.Background())
	conns := make(chan *quic.Conn, 4)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			qc, err := l.Accept(ctx)
			if err != nil {
				return
			}
			conns <- qc
			h3.ServeConn(qc)
		}
	}()
	go func() {
		defer wg.Done()
		if err := srv.fwd.Run(ctx); err != nil {
			t.Errorf("server forwarder: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = h3.Close()
		_ = l.Close()
		_ = pc.Close()
		wg.Wait()
	})
	return conns
}

// The server's IPv6 pool in the interop test, beside testPool.
var (
	testPool6   = netip.MustParsePrefix("fd00:77::/64")
	testServer6 = netip.MustParseAddr("fd00:77::1")
)

// poolAddress reports whether a is one address of pool, not the server's.
func poolAddress(a cipgo.AssignedAddress, pool netip.Prefix, server netip.Addr) bool {
	return !a.Rejected() && a.IPPrefix.IsSingleIP() && pool.Contains(a.IPPrefix.Addr()) && a.IPPrefix.Addr() != server
}

// dialWithConnectIPGo opens a tunnel to url with connect-ip-go's client
// on quic-go, sending token (if any) as a bearer token.
func dialWithConnectIPGo(ctx context.Context, url, token string) (*cipgo.Conn, *http.Response, error) {
	tr := &cipgo.Transport{
		TLSClientConfig: testkit.ClientTLS("localhost", "h3"),
		QUICConfig:      &quicgo.Config{EnableDatagrams: true},
	}
	// connect-ip-go's client takes a template without variables: the
	// default template's path with the scope */* filled in.
	req, err := cipgo.NewRequest(ctx, uritemplate.MustNew(url+connectip.AnyScope.Path()))
	if err != nil {
		return nil, nil, err
	}
	if token != "" {
		req.Header().Set("Authorization", "Bearer "+token)
	}
	return tr.Dial(req)
}

// TestInteropConnectIPGoClientWithServer: connect-ip-go's client is
// refused without the token, and with it gets an IPv4 and an IPv6 address
// of the pool and the pool's routes from Server, its address requests
// answered, without FEC, and IPv4 and IPv6 packets cross both ways intact
// between it and the server's device.
func TestInteropConnectIPGoClientWithServer(t *testing.T) {
	testkit.CheckGoroutines(t)
	dev := tunneltest.NewDevice(1500)
	srv, err := NewServer(dev, ServerConfig{Token: testToken,
		Pool: []netip.Prefix{testPool, testPool6}, Local: []netip.Addr{testServer, testServer6}})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := serveRecording(t, srv, pc)
	url := "https://" + pc.LocalAddr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	if _, resp, err := dialWithConnectIPGo(ctx, url, ""); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without a token: %v, response %v", err, resp)
	}
	<-conns // the refused client's connection

	c, resp, err := dialWithConnectIPGo(ctx, url, testToken)
	if err != nil {
		t.Fatalf("connect-ip-go Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	assigned, err := c.ReceiveAddressAssignment(ctx)
	if err != nil {
		t.Fatalf("ReceiveAddressAssignment: %v", err)
	}
	if len(assigned) != 2 || !poolAddress(assigned[0], testPool, testServer) || !poolAddress(assigned[1], testPool6, testServer6) {
		t.Fatalf("assigned %v, want one address of %v and one of %v, not the server's", assigned, testPool, testPool6)
	}
	routes, err := c.Routes(ctx)
	if err != nil {
		t.Fatalf("Routes: %v", err)
	}
	if want := []cipgo.IPRoute{
		{StartIP: testPool.Addr(), EndIP: netip.MustParseAddr("10.77.0.255")},
		{StartIP: testPool6.Addr(), EndIP: netip.MustParseAddr("fd00:77::ffff:ffff:ffff:ffff")},
	}; !slices.Equal(routes, want) {
		t.Errorf("routes %v, want %v", routes, want)
	}
	// An ADDRESS_REQUEST of connect-ip-go's: the addresses the client
	// has are given again under the requests' IDs (RFC 9484 section
	// 4.7.1).
	ids, err := c.RequestAddresses([]netip.Prefix{netip.MustParsePrefix("0.0.0.0/32"), netip.MustParsePrefix("::/128")})
	if err != nil {
		t.Fatalf("RequestAddresses: %v", err)
	}
	answer, err := c.ReceiveAddressAssignment(ctx)
	if err != nil {
		t.Fatalf("ReceiveAddressAssignment after the request: %v", err)
	}
	if want := []cipgo.AssignedAddress{{RequestID: ids[0], IPPrefix: assigned[0].IPPrefix}, {RequestID: ids[1], IPPrefix: assigned[1].IPPrefix}}; !slices.Equal(answer, want) {
		t.Errorf("request IDs %v answered with %+v, want %+v", ids, answer, want)
	}
	qc := <-conns
	if fec := qc.Stats().FEC; fec.Enabled || fec.SourcesSent != 0 {
		t.Errorf("FEC with quic-go: %+v", fec)
	}

	for i := range interopPackets {
		// IPv4 and IPv6 in turn.
		me, there := assigned[0].IPPrefix.Addr(), testServer
		if i%2 == 1 {
			me, there = assigned[1].IPPrefix.Addr(), testServer6
		}
		sent := testUDP(me, there, i, quicGoMaxPacket)
		if icmp, err := c.WritePacket(slices.Clone(sent)); err != nil || icmp != nil {
			t.Fatalf("connect-ip-go WritePacket %d: %v (ICMP %x)", i, err, icmp)
		}
		if err := checkForwarded(dev.Expect(t), sent); err != nil {
			t.Fatalf("packet %d from connect-ip-go: %v", i, err)
		}
		sent = testUDP(there, me, i, quicGoMaxPacket)
		dev.Inject <- slices.Clone(sent)
		if err := checkForwarded(readGoPacket(t, c), sent); err != nil {
			t.Fatalf("packet %d to connect-ip-go: %v", i, err)
		}
	}
	st := srv.Stats()
	if st.Clients != 1 || st.Refused != 1 || len(st.Tunnel.Sessions) != 1 ||
		st.Tunnel.Sessions[0].Received.Packets != interopPackets || st.Tunnel.Sessions[0].Sent.Packets != interopPackets {
		t.Errorf("server stats %+v", st)
	}
}
