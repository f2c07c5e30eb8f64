package gateway

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/memnet"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// The NAT rebinding test runs the whole tunnel (QUIC, HTTP/3, CONNECT-IP,
// both forwarders) over netsim/memnet inside a testing/synctest bubble:
// time is virtual, so a transfer of 100 MB over a 40 ms path replays
// exactly, and the stall the rebinding causes is measured without the
// noise of a busy machine.

var (
	rbClient    = netip.MustParseAddrPort("10.0.0.1:4433")
	rbNATInside = netip.MustParseAddrPort("10.0.0.2:5000")
	rbServer    = netip.MustParseAddrPort("10.0.1.1:443")
)

// The client's access link to the NAT is short; the NAT to the server is
// most of the 40 ms round trip. 200 Mbit/s each way.
var (
	rbAccessLink = netsim.LinkConfig{RateBps: 200e6, Delay: time.Millisecond}
	rbCoreLink   = netsim.LinkConfig{RateBps: 200e6, Delay: 19 * time.Millisecond}
)

// rbTrickle is how many heartbeats may arrive within a stall: the few
// packets the server may send to the client's new address before
// validating it, under the anti-amplification limit (RFC 9000 section
// 9.3.1), do not end it.
const rbTrickle = 4

// rbTransferBytes is the size of the transfer: 100 MB of UDP payload
// (a tenth of it under -short).
const rbTransferBytes = 100_000_000

// dialOver opens a client tunnel as Dial does, but over pc (a memnet
// socket) to server.
func dialOver(ctx context.Context, pc net.PacketConn, server netip.AddrPort, opts DialOptions) (*ClientTunnel, error) {
	u, err := tunnelURL("https://" + server.String())
	if err != nil {
		return nil, err
	}
	ct := &ClientTunnel{pathTooSmall: new(atomic.Uint64)}
	ct.tr = ct.newTransport(opts)
	ct.tr.Dial = func(ctx context.Context, _ string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error) {
		c, err := quic.Dial(ctx, pc, net.UDPAddrFromAddrPort(server), tlsConf, conf)
		if err == nil {
			ct.conn = c
		}
		return c, err
	}
	st, err := ct.connect(ctx, u, opts.Token)
	if err != nil {
		_ = ct.tr.Close()
		return nil, err
	}
	if err := ct.start(ctx, st, opts); err != nil {
		_ = st.Close()
		_ = ct.tr.Close()
		return nil, err
	}
	return ct, nil
}

// rbNetwork builds the client - NAT - server network.
func rbNetwork(t *testing.T) *memnet.Network {
	t.Helper()
	n := memnet.New(memnet.Config{Seed: 1})
	t.Cleanup(func() { _ = n.Close() })
	if _, err := n.AddPath(rbClient.Addr(), rbNATInside.Addr(), rbAccessLink, rbAccessLink); err != nil {
		t.Fatal(err)
	}
	if _, err := n.AddPath(rbNATInside.Addr(), rbServer.Addr(), rbCoreLink, rbCoreLink); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestNATRebindingBulkTransfer: halfway through a 100 MB transfer from
// the server's end of the tunnel to the client's, the NAT in front of the
// client moves it to a new port. The server's connection follows the
// client there (RFC 9000 section 9.3), the transfer completes with every
// byte in order, and the tunnel's longest stall is at most one round
// trip plus one probe timeout.
func TestNATRebindingBulkTransfer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := rbNetwork(t)
		spc, err := n.Listen(rbServer)
		if err != nil {
			t.Fatal(err)
		}
		sdev := tunneltest.NewDevice(1500)
		srv, err := NewServer(sdev, ServerConfig{Token: testToken, Pool: []netip.Prefix{testPool}, Local: []netip.Addr{testServer}})
		if err != nil {
			t.Fatal(err)
		}
		conns := serveRecording(t, srv, spc)
		relay := newNATRelay(t, func(a netip.AddrPort) (relaySocket, error) { return n.Listen(a) }, rbNATInside, rbServer)
		cpc, err := n.Listen(rbClient)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cpc.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		ct, err := dialOver(ctx, cpc, rbNATInside, DialOptions{Token: testToken, TLSConfig: testkit.ClientTLS("localhost")})
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		t.Cleanup(func() { _ = ct.Close() })
		packets := rbTransferBytes / bulkPayload
		if testing.Short() {
			packets /= 10
		}
		r := rebindDuringTransfer(ctx, t, sdev, ct, relay, packets, func() string { return fmt.Sprintf("%+v", srv.Stats()) })
		if r.stall > r.bound {
			t.Errorf("the tunnel stalled for %v after the rebinding, more than one RTT plus one PTO (%v)", r.stall, r.bound)
		}
		checkFollowed(t, <-conns, relay, r.oldPort)
		if st := ct.PathTooSmall() + srv.Stats().PathTooSmall; st != 0 {
			t.Errorf("%d packets did not fit the path", st)
		}
	})
}

// rebindResult is what rebindDuringTransfer measured.
type rebindResult struct {
	// stall is the longest time after the rebinding with at most
	// rbTrickle arrivals; bound one RTT plus one PTO of the path before.
	stall, bound time.Duration
	// oldPort is the NAT's port before the rebinding.
	oldPort netip.AddrPort
}

// rebindDuringTransfer sends packets bulk data packets from the server's
// device sdev to a forwarder on ct, has relay rebind halfway, and checks
// that every packet arrived in order; it logs the figures and returns the
// stall.
func rebindDuringTransfer(ctx context.Context, t *testing.T, sdev *tunneltest.Device, ct *ClientTunnel, relay *natRelay, packets int, server func() string) rebindResult {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cdev := forward(t, ct)
	me := ct.Prefixes[0].Addr()
	var before quic.ConnectionStats
	res := rebindResult{oldPort: relay.outsideAddr()}
	snd := &bulkSender{dev: sdev, src: testServer, dst: me, packets: packets}
	rcv := &bulkReceiver{dev: cdev, src: me, dst: testServer, packets: packets, onHalf: func() error {
		before = ct.ConnStats()
		return relay.rebind()
	}}
	sent := make(chan error, 1)
	go func() { sent <- snd.run(ctx) }()
	beating, stopBeat := context.WithCancel(ctx)
	beaten := make(chan struct{})
	go func() {
		defer close(beaten)
		beat(beating, sdev, testServer, me)
	}()
	defer func() {
		stopBeat()
		<-beaten
	}()
	if err := rcv.run(ctx); err != nil {
		cancel()
		if serr := <-sent; serr != nil {
			t.Logf("the sender ended: %v", serr)
		}
		cs := ct.ConnStats()
		unknown, full := ct.tr.DroppedDatagrams()
		t.Logf("client connection: RTT %v, window %d, datagrams %+v; HTTP/3 datagrams dropped for no stream %d, for a full queue %d; client tunnel %+v; server: %s",
			cs.SmoothedRTT, cs.CongestionWindow, cs.Datagrams, unknown, full, ct.Session.Stats(), server())
		t.Fatalf("%v; the tunnel did not carry on after the NAT rebinding", err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	// One round trip plus one probe timeout (RFC 9002 section 6.2.1) as
	// the client measured the path before the rebinding.
	pto := before.SmoothedRTT + max(4*before.RTTVariance, time.Millisecond) + 25*time.Millisecond
	res.bound = before.SmoothedRTT + pto
	gap, _ := longestSpan(rcv.BeatsAfter, 0)
	stall, stallEnd := longestSpan(rcv.BeatsAfter, rbTrickle)
	dataGap, _ := longestSpan(rcv.ArrivalsAfter, 0)
	res.stall = stall
	elapsed := rcv.End.Sub(rcv.Start)
	bytes := packets * bulkPayload
	t.Logf("%d packets (%.1f MB) in %v (%.0f Mbit/s); rebinding at %v; RTT %v, PTO %v", packets, float64(bytes)/1e6,
		elapsed, float64(bytes)*8/elapsed.Seconds()/1e6, rcv.HalfAt.Sub(rcv.Start), before.SmoothedRTT, pto)
	_, full := ct.tr.DroppedDatagrams()
	t.Logf("client's HTTP/3 datagrams dropped for a full stream queue: %d; client connection %+v", full, ct.ConnStats().Datagrams)
	t.Logf("heartbeats (every %v): longest gap %v, longest time with at most %d %v, ending %v after the rebinding; data: longest gap %v, longest wait for an in-order packet %v; lost in the tunnel %d, sent again %d, answered with ICMP %d",
		bulkBeatEvery, gap, rbTrickle, stall, stallEnd.Sub(rcv.HalfAt), dataGap, rcv.LongestInOrderGap, snd.Sent-rcv.Arrived, snd.Retransmitted, snd.TooBig)
	return res
}

// checkFollowed checks that the server's connection sc follows the
// client to the relay's new port, having validated it and kept its
// congestion state (RFC 9000 sections 9.3 and 9.4).
func checkFollowed(t *testing.T, sc *quic.Conn, relay *natRelay, oldPort netip.AddrPort) {
	t.Helper()
	if got, want := sc.RemoteAddr().String(), relay.outsideAddr().String(); got != want || want == oldPort.String() {
		t.Errorf("the server sends to %v, want the NAT's new port %v (the old one was %v)", got, want, oldPort)
	}
	if m := sc.Stats().Migration; m.PeerAddressChanges != 1 || m.PortChanges != 1 || m.ValidationsSucceeded != 1 || m.CongestionResets != 0 {
		t.Errorf("server %+v: want one port change, validated, with the congestion state kept", m)
	}
}

// rbLoopbackMargin is what the loopback test adds to one RTT plus one PTO
// for a busy machine, whose scheduler can hold any of the goroutines on
// the way (relay, connections, forwarders) for that long.
const rbLoopbackMargin = 500 * time.Millisecond

// TestNATRebindingLoopback: the same rebinding over real sockets and in
// real time, through a relay on loopback, with a 20 MB transfer. The
// server follows the client, everything arrives in order, and the stall
// stays under one RTT plus one PTO with a margin for a busy machine.
func TestNATRebindingLoopback(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken})
	server, err := netip.ParseAddrPort(strings.TrimPrefix(g.url, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	listen := func(a netip.AddrPort) (relaySocket, error) { return net.ListenUDP("udp", net.UDPAddrFromAddrPort(a)) }
	relay := newNATRelay(t, listen, netip.MustParseAddrPort("127.0.0.1:0"), server)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ct, err := Dial(ctx, "https://"+relay.insideAddr().String(), DialOptions{Token: testToken, TLSConfig: testkit.ClientTLS("localhost")})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = ct.Close() })
	r := rebindDuringTransfer(ctx, t, g.dev, ct, relay, 20_000_000/bulkPayload, func() string { return fmt.Sprintf("%+v", g.srv.Stats()) })
	if r.stall > r.bound+rbLoopbackMargin {
		t.Errorf("the tunnel stalled for %v after the rebinding, more than one RTT plus one PTO (%v) and %v", r.stall, r.bound, rbLoopbackMargin)
	}
	if st := g.srv.Stats(); st.Clients != 1 {
		t.Errorf("server stats %+v", st)
	}
}
