package core

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// TestClientDropsUnknownServerAddress: an authentic packet of the server
// (a CONNECTION_CLOSE) that reaches the client from another address, as
// an attacker that copied it would send it, is dropped before it is
// parsed and counted (RFC 9000 section 9); the same packet from the
// server's address closes the connection.
func TestClientDropsUnknownServerAddress(t *testing.T) {
	p := confirmedPair(t, 51)
	closeFrame := frameBytes(t, &wire.ConnectionCloseFrame{ErrorCode: 0, ReasonPhrase: "bye"})
	for i, from := range []netip.AddrPort{
		netip.MustParseAddrPort("192.0.2.66:443"), // another host
		netip.MustParseAddrPort("10.0.0.2:444"),   // the server's host, another port
		netip.MustParseAddrPort("[::ffff:10.0.0.3]:443"),
	} {
		p.client.HandleDatagram(p.now, Datagram{Addr: from, Data: seal1RTT(t, p.now, p.server, closeFrame, 0)})
		if p.client.state != stateActive {
			t.Fatalf("a packet from %v closed the client", from)
		}
		if n := p.client.Stats().Path.UnknownServerAddress; n != uint64(i+1) {
			t.Fatalf("%d datagrams counted from unknown addresses, want %d", n, i+1)
		}
	}
	before := p.client.Stats().DatagramsReceived
	p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, closeFrame, 0)})
	if p.client.state != stateDraining {
		t.Errorf("the server's CONNECTION_CLOSE from its own address left the client in state %v", p.client.state)
	}
	if got := p.client.Stats().DatagramsReceived; got != before+1 {
		t.Errorf("datagrams received went from %d to %d, want one more", before, got)
	}
}

// TestServerTakesAnyAddress: the rule is the client's; a server follows
// its client to a new address (path.go) and counts nothing.
func TestServerTakesAnyAddress(t *testing.T) {
	p := confirmedPair(t, 52)
	from := netip.MustParseAddrPort("192.0.2.9:5000")
	p.server.HandleDatagram(p.now, Datagram{Addr: from, Data: seal1RTT(t, p.now, p.client, frameBytes(t, &wire.PingFrame{}), 0)})
	if p.server.RemoteAddr() != from || p.server.Stats().Path.UnknownServerAddress != 0 {
		t.Errorf("server at %v, %d dropped", p.server.RemoteAddr(), p.server.Stats().Path.UnknownServerAddress)
	}
}

// TestClientServerAddressesAroundPreferred: while the client probes the
// server's preferred address it takes datagrams from there besides the
// server's address; once it moved, from the preferred address, and from
// the address it left until a path validation's time has passed, then no
// more. Times are explicit.
func TestClientServerAddressesAroundPreferred(t *testing.T) {
	preferred := netip.MustParseAddrPort("10.0.0.3:8443")
	other := netip.MustParseAddrPort("10.0.0.4:443")
	p := migrationPair(t, func(_, scfg *Config) { scfg.PreferredIPv4 = preferred })
	c := p.client
	c.maybeProbePreferred(p.now)
	if !c.path.probe.active || c.path.probe.addr != preferred {
		t.Fatalf("no probe of the preferred address: %+v", c.path.probe)
	}
	for addr, want := range map[netip.AddrPort]bool{serverAddr: true, preferred: true, other: false} {
		if got := c.fromServer(p.now, addr); got != want {
			t.Errorf("probing: datagram from %v taken %v, want %v", addr, got, want)
		}
	}
	d := startPairDownload(t, p, 256<<10)
	p.mustRun(func() bool { d.read(t, p); return c.RemoteAddr() == preferred }, p.now+10*time.Second)
	moved := p.now
	until := c.path.formerUntil
	if until <= moved {
		t.Fatalf("former address taken until %v, moved at %v", until, moved)
	}
	for _, tc := range []struct {
		now  time.Duration
		addr netip.AddrPort
		want bool
	}{
		{moved, preferred, true}, {moved, serverAddr, true}, {moved, other, false},
		{until - 1, serverAddr, true}, {until, serverAddr, false}, {until, preferred, true},
	} {
		if got := c.fromServer(tc.now, tc.addr); got != tc.want {
			t.Errorf("at %v after the move: datagram from %v taken %v, want %v", tc.now-moved, tc.addr, got, tc.want)
		}
	}
	p.mustRun(func() bool { return d.read(t, p) }, p.now+30*time.Second)
	if !bytes.Equal(d.got, d.response) {
		t.Fatalf("the client read %d bytes, not the %d-byte response", len(d.got), len(d.response))
	}
	if n := c.Stats().Path.UnknownServerAddress; n != 0 {
		t.Errorf("%d of the server's datagrams dropped around the move", n)
	}
	// A packet of the server from the address the client left, after
	// the grace: dropped and counted.
	late := max(p.now, until)
	c.HandleDatagram(late, Datagram{Addr: serverAddr, Data: seal1RTT(t, late, p.server, frameBytes(t, &wire.PingFrame{}), 0)})
	if n := c.Stats().Path.UnknownServerAddress; n != 1 {
		t.Errorf("%d datagrams dropped from the left address after the grace, want 1", n)
	}
}
