package quic

import (
	"maps"
	"net/netip"
	"testing"
)

// TestPeerCounts adds connections under two addresses, removes some,
// moves one to the other address, and checks after each change that each
// address counts exactly its connections and an address without any is
// gone.
func TestPeerCounts(t *testing.T) {
	a := netip.MustParseAddrPort("192.0.2.1:443")
	b := netip.MustParseAddrPort("192.0.2.2:443")
	tr := &Transport{peerConns: map[netip.AddrPort]int{}}
	var conns []*Conn
	for i := range 6 {
		c := &Conn{remote: a}
		if i%3 == 2 {
			c.remote = b
		}
		tr.addPeerLocked(c)
		conns = append(conns, c)
	}
	check := func(step string, want map[netip.AddrPort]int) {
		t.Helper()
		if !maps.Equal(tr.peerConns, want) {
			t.Fatalf("%s: %v, want %v", step, tr.peerConns, want)
		}
	}
	check("added", map[netip.AddrPort]int{a: 4, b: 2})
	for _, i := range []int{0, 4} {
		tr.removePeerLocked(conns[i])
	}
	check("removed", map[netip.AddrPort]int{a: 2, b: 2})
	// Removing twice changes nothing.
	tr.removePeerLocked(conns[0])
	check("removed again", map[netip.AddrPort]int{a: 2, b: 2})
	// setRemote's move, without its connection mutex.
	c := conns[1]
	tr.removePeerLocked(c)
	c.remote = b
	tr.addPeerLocked(c)
	check("moved", map[netip.AddrPort]int{a: 1, b: 3})
	for _, c := range []*Conn{conns[1], conns[2], conns[5]} {
		tr.removePeerLocked(c)
	}
	check("b emptied", map[netip.AddrPort]int{a: 1})
	tr.removePeerLocked(conns[3])
	check("emptied", map[netip.AddrPort]int{})
}
