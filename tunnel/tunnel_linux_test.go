package tunnel

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/connectip/connectiptest"
	"github.com/satquic/satquic/internal/testkit"
)

// TestKernelTCPThroughTheTunnel joins two network namespaces by a
// CONNECT-IP client and proxy over the in-memory carrier, each forwarding
// to a TUN device, and sends 4 MB over kernel TCP from the client's
// namespace to a server in the proxy's. The TUN devices have an MTU of
// 1400 and the tunnel carries 1280: the first full-size segments are
// answered with Packet Too Big, the kernel lowers its path MTU, and the
// transfer completes.
func TestKernelTCPThroughTheTunnel(t *testing.T) {
	testkit.RequireNamespaces(t, "the kernel TCP tunnel test")
	clientAddr, serverAddr := netip.MustParseAddr("10.8.0.2"), netip.MustParseAddr("10.9.0.1")
	a, b := connectiptest.Pipe(connectiptest.Config{QueueLen: 1024})
	routes := []connectip.IPRoute{connectip.RouteFromPrefix(netip.MustParsePrefix("10.9.0.0/24"), 0)}
	proxy, err := connectip.NewProxy(b, []netip.Prefix{netip.PrefixFrom(clientAddr, 32)}, routes, connectip.ProxyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := connectip.NewClient(a, connectip.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	var serverTUN, clientTUN *TUN
	var ln net.Listener
	inNewNetns(t, func() {
		serverTUN, err = OpenTUN(TUNConfig{Name: "sqts0", MTU: 1400, Addrs: []netip.Prefix{netip.PrefixFrom(serverAddr, 32)}, Routes: proxy.AssignedPrefixes()})
		if err == nil {
			ln, err = net.Listen("tcp", netip.AddrPortFrom(serverAddr, 0).String())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	proxyFwd := New(serverTUN, proxy, Config{})
	go func() { errs <- proxyFwd.Run(ctx) }()
	var clientFwd *Forwarder
	running := 1
	defer func() {
		cancel()
		for range running {
			if err := <-errs; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}()

	payload := testkit.Payload(4<<20, 1)
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(60 * time.Second))
		data, _ := io.ReadAll(c)
		got <- data
	}()
	// The client's socket must be made in its namespace, and connects once
	// both forwarders run.
	var conn net.Conn
	inNewNetns(t, func() {
		var routes []netip.Prefix
		for _, r := range client.Routes() {
			routes = append(routes, r.RangePrefixes()...)
		}
		clientTUN, err = OpenTUN(TUNConfig{Name: "sqtc0", MTU: 1400, Addrs: client.LocalPrefixes(), Routes: routes})
		if err != nil {
			return
		}
		clientFwd = New(clientTUN, client, Config{})
		running++
		go func() { errs <- clientFwd.Run(ctx) }()
		conn, err = net.DialTimeout("tcp", ln.Addr().String(), 30*time.Second)
	})
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	start := time.Now()
	if _, err := conn.Write(payload); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if data := <-got; !bytes.Equal(data, payload) {
		t.Fatalf("the server got %d bytes of %d, or other bytes", len(data), len(payload))
	}
	elapsed := time.Since(start)
	st := clientFwd.Stats()
	if st.ICMPToDevice == 0 || st.Sessions[0].Sent.Dropped.TooBig == 0 || st.OverloadDrops != 0 {
		t.Fatalf("client side: %+v", st)
	}
	if st := proxyFwd.Stats(); st.Sessions[0].Received.Dropped != (connectip.Drops{}) {
		t.Fatalf("proxy side dropped: %+v", st.Sessions[0].Received.Dropped)
	}
	// With TSO granted, the sender's kernel TCP hands its TUN
	// super-packets, which were cut; a kernel that refused says why.
	co, so := clientTUN.OffloadStats(), serverTUN.OffloadStats()
	if strings.HasPrefix(co.Mode, "tso") && (co.SuperPacketsRead == 0 || co.BadFrames != 0) {
		t.Errorf("client TUN with offloads %q read %d super-packets, %d bad frames", co.Mode, co.SuperPacketsRead, co.BadFrames)
	}
	if !strings.HasPrefix(co.Mode, "tso") {
		t.Logf("no offloads: %s", co.Mode)
	}
	t.Logf("%d bytes in %v (%.0f Mbit/s); client side: %+v; client TUN %+v; server TUN %+v",
		len(payload), elapsed, float64(len(payload))*8/elapsed.Seconds()/1e6, st, co, so)
}
