package connectip_test

import (
	"errors"
	"net/netip"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/connectip/connectiptest"
)

var everywhere = []connectip.IPRoute{
	connectip.RouteFromPrefix(netip.MustParsePrefix("0.0.0.0/0"), 0),
	connectip.RouteFromPrefix(netip.MustParsePrefix("::/0"), 0),
}

func newPool(t *testing.T) *connectip.AddressPool {
	t.Helper()
	pool, err := connectip.NewAddressPool(netip.MustParsePrefix("10.8.0.0/24"), netip.MustParsePrefix("fd00:8::/120"))
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

// tunnelPair runs a proxy with the pool and a client asking for one
// address of each version over an in-memory carrier.
func tunnelPair(t *testing.T, pool *connectip.AddressPool, cfg connectiptest.Config) (client, proxy *connectip.Session) {
	t.Helper()
	a, b := connectiptest.Pipe(cfg)
	return sessionsOn(t, pool, a, b, connectip.Config{}, connectip.Config{})
}

// sessionsOn is tunnelPair on the carriers given, the client's and the
// proxy's ends of one pipe, with each session's configuration.
func sessionsOn(t *testing.T, pool *connectip.AddressPool, clientEnd, proxyEnd connectip.Carrier, clientCfg, proxyCfg connectip.Config) (client, proxy *connectip.Session) {
	t.Helper()
	proxy, err := connectip.NewProxy(proxyEnd, nil, everywhere, connectip.ProxyConfig{Pool: pool, Config: proxyCfg})
	if err != nil {
		t.Fatal(err)
	}
	client, err = connectip.NewClient(clientEnd, connectip.ClientConfig{
		Config:           clientCfg,
		RequestAddresses: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32"), netip.MustParsePrefix("::/128")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); proxy.Close() })
	return client, proxy
}

// expectPackets reads len(want) packets from s and checks that they are
// want, in order.
func expectPackets(t *testing.T, s *connectip.Session, want ...[]byte) {
	t.Helper()
	buf := make([]byte, 2000)
	for _, w := range want {
		n, err := s.ReadPacket(buf)
		if err != nil || string(buf[:n]) != string(w) {
			t.Fatalf("read %d bytes, %v; want the %d-byte packet", n, err, len(w))
		}
	}
}

func TestClientProxyAddressesAndRoutes(t *testing.T) {
	pool := newPool(t)
	client, proxy := tunnelPair(t, pool, connectiptest.Config{})
	want := []netip.Prefix{netip.MustParsePrefix("10.8.0.1/32"), netip.MustParsePrefix("fd00:8::1/128")}
	if got := client.LocalPrefixes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("client addresses %v, want %v", got, want)
	}
	if got := proxy.AssignedPrefixes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("proxy assigned %v, want %v", got, want)
	}
	if got := client.Routes(); !reflect.DeepEqual(got, everywhere) {
		t.Fatalf("routes %v", got)
	}
	// A second client gets other addresses; closing the first gives its
	// addresses back to the pool.
	second, _ := tunnelPair(t, pool, connectiptest.Config{})
	if got := second.LocalPrefixes(); got[0] == want[0] || got[1] == want[1] {
		t.Fatalf("the second client got %v too", got)
	}
	if pool.InUse() != 4 {
		t.Fatalf("in use: %d", pool.InUse())
	}
	proxy.Close()
	if pool.InUse() != 2 {
		t.Fatalf("in use after a close: %d", pool.InUse())
	}
}

func TestPacketsBothWays(t *testing.T) {
	client, proxy := tunnelPair(t, newPool(t), connectiptest.Config{})
	buf := make([]byte, 2000)
	for _, c := range []struct{ local, remote string }{{"10.8.0.1", "203.0.113.5"}, {"fd00:8::1", "2001:db8::5"}} {
		up := connectip.TestPacket(t, c.local, c.remote, 17, 500, 64)
		if _, err := client.WritePacket(up); err != nil {
			t.Fatal(err)
		}
		n, err := proxy.ReadPacket(buf)
		if err != nil || n != 500 {
			t.Fatalf("proxy read %d, %v", n, err)
		}
		h, _ := connectip.ParseIPHeader(buf[:n])
		if h.HopLimit != 63 || h.Src.String() != c.local {
			t.Fatalf("proxy got %+v: the hop limit is decremented once, on encapsulation", h)
		}
		down := connectip.TestPacket(t, c.remote, c.local, 6, 1280, 64)
		if _, err := proxy.WritePacket(down); err != nil {
			t.Fatal(err)
		}
		if n, err := client.ReadPacket(buf); err != nil || n != 1280 {
			t.Fatalf("client read %d, %v", n, err)
		}
	}
	st := client.Stats()
	if st.Sent.Packets != 2 || st.Sent.Bytes != 1000 || st.Received.Packets != 2 || st.Received.Bytes != 2560 {
		t.Fatalf("client stats %+v", st)
	}
	if st := proxy.Stats(); st.Sent.Packets != 2 || st.Received.Packets != 2 || st.Received.Dropped != (connectip.Drops{}) {
		t.Fatalf("proxy stats %+v", st)
	}
}

func TestClientSendChecks(t *testing.T) {
	client, _ := tunnelPair(t, newPool(t), connectiptest.Config{})
	cases := []struct {
		name string
		p    []byte
		icmp bool
	}{
		{"spoofed source", connectip.TestPacket(t, "10.8.0.99", "203.0.113.5", 17, 100, 64), false},
		{"too big", connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 6, 1400, 64), true},
		{"no hops left", connectip.TestPacket(t, "fd00:8::1", "2001:db8::5", 6, 100, 1), true},
		{"junk", []byte{0x45, 0, 0}, false},
	}
	for _, c := range cases {
		icmp, err := client.WritePacket(c.p)
		if !errors.Is(err, connectip.ErrDropped) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (icmp != nil) != c.icmp {
			t.Fatalf("%s: ICMP %x", c.name, icmp)
		}
	}
	d := client.Stats().Sent.Dropped
	if d != (connectip.Drops{SourceNotAllowed: 1, TooBig: 1, HopLimit: 1, Malformed: 1}) {
		t.Fatalf("drops %+v", d)
	}
}

// rawProxy starts a proxy that assigned 10.7.0.7 and advertised only UDP
// to 198.51.100.0/24, and returns the client's end of the carrier, for
// tests that play a misbehaving client.
func rawProxy(t *testing.T) (*connectiptest.End, *connectip.Session) {
	t.Helper()
	a, b := connectiptest.Pipe(connectiptest.Config{})
	routes := []connectip.IPRoute{connectip.RouteFromPrefix(netip.MustParsePrefix("198.51.100.0/24"), 17)}
	proxy, err := connectip.NewProxy(b, []netip.Prefix{netip.MustParsePrefix("10.7.0.7/32")}, routes, connectip.ProxyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	return a, proxy
}

func TestProxyDropsWhatItMustNotForward(t *testing.T) {
	raw, proxy := rawProxy(t)
	var registered [][]byte
	proxy.HandleContext(2, func(p []byte) { registered = append(registered, append([]byte(nil), p...)) })
	send := func(ctx uint64, p []byte) {
		if err := raw.SendDatagram(connectip.AppendDatagram(nil, ctx, p)); err != nil {
			t.Fatal(err)
		}
	}
	send(0, connectip.TestPacket(t, "10.7.0.8", "198.51.100.1", 17, 100, 64)) // spoofed
	send(0, connectip.TestPacket(t, "10.7.0.7", "198.51.101.1", 17, 100, 64)) // no route
	send(0, connectip.TestPacket(t, "10.7.0.7", "198.51.100.1", 6, 100, 64))  // TCP on a UDP route
	send(0, []byte{0x45, 0, 0, 1})                                            // not a packet
	send(4, []byte("unregistered"))
	send(2, []byte("registered"))
	if err := raw.SendDatagram([]byte{0x40}); err != nil { // a truncated Context ID
		t.Fatal(err)
	}
	icmp := connectip.TestPacket(t, "10.7.0.7", "198.51.100.1", 1, 100, 64)
	icmp[20] = 8 // echo request: ICMP is allowed on any route
	send(0, icmp)
	buf := make([]byte, 1500)
	n, err := proxy.ReadPacket(buf)
	if err != nil || n != 100 || buf[9] != 1 {
		t.Fatalf("read %d bytes, protocol %d, %v", n, buf[9], err)
	}
	want := connectip.Drops{SourceNotAllowed: 1, DestinationNotRouted: 2, Malformed: 2, UnknownContext: 1}
	if d := proxy.Stats().Received.Dropped; d != want {
		t.Fatalf("drops %+v, want %+v", d, want)
	}
	if len(registered) != 1 || string(registered[0]) != "registered" {
		t.Fatalf("registered context got %q", registered)
	}
}

func TestMalformedCapsulesEndTheSession(t *testing.T) {
	for name, capsule := range map[string][]byte{
		"request ID 0":     connectip.AppendCapsule(nil, connectip.CapsuleAddressRequest, []byte{0, 4, 0, 0, 0, 0, 32}),
		"empty request":    connectip.AppendCapsule(nil, connectip.CapsuleAddressRequest, nil),
		"unordered routes": connectip.AppendCapsule(nil, connectip.CapsuleRouteAdvertisement, []byte{6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 4, 1, 1, 1, 1, 1, 1, 1, 1, 0}),
		"IP version 5":     connectip.AppendCapsule(nil, connectip.CapsuleAddressAssign, []byte{0, 5, 1, 2, 3, 4, 32}),
		"too large":        {0x01, 0x80, 0x10, 0x00, 0x01},
	} {
		t.Run(name, func(t *testing.T) {
			raw, proxy := rawProxy(t)
			unknown := connectip.AppendCapsule(nil, 0x2a, []byte("grease"))
			if _, err := raw.Write(append(unknown, capsule...)); err != nil {
				t.Fatal(err)
			}
			select {
			case <-proxy.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the session goes on")
			}
			if st := proxy.Stats(); st.MalformedCapsules != 1 || st.CapsulesIgnored != 1 {
				t.Fatalf("stats %+v", st)
			}
			if err := proxy.Err(); !errors.Is(err, connectip.ErrMalformed) && !errors.Is(err, connectip.ErrCapsuleTooLarge) {
				t.Fatalf("error %v", err)
			}
			if _, err := proxy.ReadPacket(make([]byte, 100)); err == nil {
				t.Fatal("ReadPacket after the end")
			}
		})
	}
}

func TestRequestIDReusedAcrossCapsules(t *testing.T) {
	raw, proxy := rawProxy(t)
	req, _ := connectip.AppendAddressRequest(nil, []connectip.RequestedAddress{{RequestID: 5, Prefix: netip.MustParsePrefix("0.0.0.0/32")}})
	raw.Write(req)
	raw.Write(req)
	<-proxy.Done()
	if !errors.Is(proxy.Err(), connectip.ErrMalformed) {
		t.Fatalf("error %v", proxy.Err())
	}
}

func TestRequestsAnsweredFromTheAssignment(t *testing.T) {
	a, b := connectiptest.Pipe(connectiptest.Config{})
	proxy, err := connectip.NewProxy(b, []netip.Prefix{netip.MustParsePrefix("10.7.0.0/29")}, everywhere, connectip.ProxyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	client, err := connectip.NewClient(a, connectip.ClientConfig{
		RequestAddresses: []netip.Prefix{netip.MustParsePrefix("::/128"), netip.MustParsePrefix("0.0.0.0/32")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if got := client.LocalPrefixes(); len(got) != 1 || got[0] != netip.MustParsePrefix("10.7.0.0/29") {
		t.Fatalf("the IPv4 request gets the assigned prefix and the IPv6 one is rejected: %v", got)
	}
	// Any address of an assigned prefix is a valid source.
	if _, err := client.WritePacket(connectip.TestPacket(t, "10.7.0.5", "192.0.2.1", 17, 64, 64)); err != nil {
		t.Fatal(err)
	}
	if n, err := proxy.ReadPacket(make([]byte, 100)); err != nil || n != 64 {
		t.Fatal(n, err)
	}
}

func TestClientWithoutAddress(t *testing.T) {
	a, b := connectiptest.Pipe(connectiptest.Config{})
	proxy, err := connectip.NewProxy(b, nil, everywhere, connectip.ProxyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	_, err = connectip.NewClient(a, connectip.ClientConfig{RequestAddresses: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32")}})
	if !errors.Is(err, connectip.ErrNoAddress) {
		t.Fatalf("%v", err)
	}
}

func TestClientSetupTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := connectiptest.Pipe(connectiptest.Config{})
		defer b.Close()
		start := time.Now()
		_, err := connectip.NewClient(a, connectip.ClientConfig{Timeout: 3 * time.Second})
		if err == nil || time.Since(start) != 3*time.Second {
			t.Fatalf("after %v: %v", time.Since(start), err)
		}
	})
}

func TestClosedSession(t *testing.T) {
	client, proxy := tunnelPair(t, newPool(t), connectiptest.Config{})
	done := make(chan error, 1)
	go func() {
		_, err := proxy.ReadPacket(make([]byte, 100))
		done <- err
	}()
	proxy.Close()
	if err := <-done; !errors.Is(err, connectip.ErrClosed) {
		t.Fatalf("a blocked ReadPacket returned %v", err)
	}
	if _, err := proxy.WritePacket(connectip.TestPacket(t, "192.0.2.1", "10.8.0.1", 17, 64, 64)); !errors.Is(err, connectip.ErrClosed) {
		t.Fatalf("WritePacket after Close: %v", err)
	}
	<-client.Done()
	if client.Err() == nil {
		t.Fatal("the client did not see the end of the stream")
	}
}

func TestLossyReorderingCarrier(t *testing.T) {
	client, proxy := tunnelPair(t, newPool(t), connectiptest.Config{Loss: 0.1, Reorder: 0.2, Seed: 7, QueueLen: 4096})
	const sent = 2000
	for i := range sent {
		p := connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 17, 100, 64)
		p[99] = byte(i)
		if _, err := client.WritePacket(p); err != nil {
			t.Fatal(err)
		}
	}
	// Each packet is lost or delivered, whole; the held-back one is
	// delivered by a last packet.
	client.WritePacket(connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 17, 100, 64))
	buf := make([]byte, 200)
	received := 0
	deadline := time.After(10 * time.Second)
	for received < sent*8/10 {
		select {
		case <-deadline:
			t.Fatalf("%d of %d received", received, sent)
		default:
		}
		if n, err := proxy.ReadPacket(buf); err != nil || n != 100 {
			t.Fatal(n, err)
		}
		received++
	}
	if st := proxy.Stats(); st.Received.Dropped != (connectip.Drops{}) {
		t.Fatalf("drops %+v", st.Received.Dropped)
	}
}

func TestClientWaitsForItsOwnRequestIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := connectiptest.Pipe(connectiptest.Config{})
		defer b.Close()
		// The proxy answers a Request ID the client never sent: that is no
		// answer to the client's request 1.
		assign, _ := connectip.AppendAddressAssign(nil, []connectip.AssignedAddress{{RequestID: 2, Prefix: netip.MustParsePrefix("10.1.0.1/32")}})
		routes, _ := connectip.AppendRouteAdvertisement(nil, everywhere)
		b.Write(append(assign, routes...))
		_, err := connectip.NewClient(a, connectip.ClientConfig{
			RequestAddresses: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32")}, Timeout: time.Second,
		})
		if err == nil {
			t.Fatal("the client took an answer to a request it did not send")
		}
	})
}

func TestMTUBelowIPv6Minimum(t *testing.T) {
	_, b := connectiptest.Pipe(connectiptest.Config{})
	if _, err := connectip.NewProxy(b, nil, everywhere, connectip.ProxyConfig{Config: connectip.Config{MTU: 1200}}); err == nil {
		t.Fatal("a proxy routing IPv6 over a 1200-byte tunnel MTU")
	}
	a, b := connectiptest.Pipe(connectiptest.Config{})
	v4 := everywhere[:1]
	proxy, err := connectip.NewProxy(b, []netip.Prefix{netip.MustParsePrefix("10.1.0.1/32")}, v4, connectip.ProxyConfig{Config: connectip.Config{MTU: 1200}})
	if err != nil {
		t.Fatalf("IPv4 only over 1200 bytes: %v", err)
	}
	defer proxy.Close()
	client, err := connectip.NewClient(a, connectip.ClientConfig{Config: connectip.Config{MTU: 1200}})
	if err != nil {
		t.Fatalf("IPv4-only client over 1200 bytes: %v", err)
	}
	client.Close()

	a, b = connectiptest.Pipe(connectiptest.Config{})
	proxy, err = connectip.NewProxy(b, []netip.Prefix{netip.MustParsePrefix("fd00::1/128")}, everywhere, connectip.ProxyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	if _, err := connectip.NewClient(a, connectip.ClientConfig{Config: connectip.Config{MTU: 1200}}); err == nil {
		t.Fatal("a client took IPv6 over a 1200-byte tunnel MTU")
	}
}

// FuzzProxyInput feeds a proxy session a capsule stream and a datagram
// from a client: whatever they hold, the proxy must not panic or hang; it
// forwards an allowed packet sent after them unless the stream was
// malformed and ended the session.
func FuzzProxyInput(f *testing.F) {
	req, _ := connectip.AppendAddressRequest(nil, []connectip.RequestedAddress{{RequestID: 1, Prefix: netip.MustParsePrefix("0.0.0.0/32")}})
	routes, _ := connectip.AppendRouteAdvertisement(nil, everywhere)
	pkt := connectip.TestPacket(f, "10.7.0.7", "198.51.100.1", 17, 40, 64)
	f.Add(append(req, routes...), connectip.AppendDatagram(nil, 0, pkt))
	f.Add([]byte{0x02, 0x01, 0x00}, []byte{0x40})
	f.Add(connectip.AppendCapsule(nil, 0x99, []byte("x")), connectip.AppendDatagram(nil, 3, nil))
	f.Fuzz(func(t *testing.T, stream, dgram []byte) {
		pool, _ := connectip.NewAddressPool(netip.MustParsePrefix("10.8.0.0/24"), netip.MustParsePrefix("fd00:8::/120"))
		a, b := connectiptest.Pipe(connectiptest.Config{})
		proxy, err := connectip.NewProxy(b, []netip.Prefix{netip.MustParsePrefix("10.7.0.7/32")}, everywhere, connectip.ProxyConfig{Pool: pool})
		if err != nil {
			t.Fatal(err)
		}
		defer proxy.Close()
		a.Write(stream)
		a.SendDatagram(dgram)
		a.SendDatagram(connectip.AppendDatagram(nil, 0, pkt))
		buf := make([]byte, 1500)
		for {
			n, err := proxy.ReadPacket(buf)
			if err != nil {
				if proxy.Err() == nil {
					t.Fatalf("ReadPacket failed in a running session: %v", err)
				}
				return
			}
			if _, err := connectip.ParseIPHeader(buf[:n]); err != nil {
				t.Fatalf("forwarded a malformed packet: %v", err)
			}
			if string(buf[:n]) == string(pkt) {
				return
			}
		}
	})
}

func TestClientTakesOnlyPacketsForItsAddresses(t *testing.T) {
	a, b := connectiptest.Pipe(connectiptest.Config{})
	assign, _ := connectip.AppendAddressAssign(nil, []connectip.AssignedAddress{{Prefix: netip.MustParsePrefix("10.1.0.1/32")}})
	routes, _ := connectip.AppendRouteAdvertisement(nil, everywhere)
	b.Write(append(assign, routes...))
	defer b.Close()
	client, err := connectip.NewClient(a, connectip.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	b.SendDatagram(connectip.AppendDatagram(nil, 0, connectip.TestPacket(t, "192.0.2.1", "10.1.0.2", 17, 50, 64)))
	b.SendDatagram(connectip.AppendDatagram(nil, 0, connectip.TestPacket(t, "192.0.2.1", "10.1.0.1", 17, 60, 64)))
	if n, err := client.ReadPacket(make([]byte, 100)); err != nil || n != 60 {
		t.Fatalf("read %d, %v", n, err)
	}
	if d := client.Stats().Received.Dropped; d != (connectip.Drops{DestinationNotRouted: 1}) {
		t.Fatalf("drops %+v", d)
	}
}

// TestWritePacketsBatch: a batch goes out in order but for the packets
// the checks refuse, which are reported with their index and ICMP error;
// the counters are WritePacket's.
func TestWritePacketsBatch(t *testing.T) {
	client, proxy := tunnelPair(t, newPool(t), connectiptest.Config{})
	pkts := [][]byte{
		connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 17, 500, 64),
		connectip.TestPacket(t, "10.8.0.99", "203.0.113.5", 17, 100, 64), // spoofed
		connectip.TestPacket(t, "10.8.0.1", "203.0.113.6", 17, 600, 64),
		connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 6, 1400, 64), // too big
		connectip.TestPacket(t, "10.8.0.1", "203.0.113.7", 17, 700, 64),
	}
	var refused []int
	var icmps int
	err := client.WritePackets(pkts, func(i int, icmp []byte, err error) {
		if !errors.Is(err, connectip.ErrDropped) {
			t.Errorf("packet %d refused with %v", i, err)
		}
		refused = append(refused, i)
		if icmp != nil {
			icmps++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(refused) != 2 || refused[0] != 1 || refused[1] != 3 || icmps != 1 {
		t.Fatalf("refused %v with %d ICMP errors, want [1 3] with 1", refused, icmps)
	}
	buf := make([]byte, 2000)
	for _, want := range []int{500, 600, 700} {
		n, err := proxy.ReadPacket(buf)
		if err != nil || n != want {
			t.Fatalf("proxy read %d, %v; want %d", n, err, want)
		}
	}
	st := client.Stats().Sent
	if st.Packets != 3 || st.Bytes != 1800 || st.Dropped != (connectip.Drops{SourceNotAllowed: 1, TooBig: 1}) {
		t.Fatalf("client sent %+v", st)
	}
}
