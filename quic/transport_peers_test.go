package quic

import (
	"net/netip"
	"testing"
)

// TestPeerListsKeepIndexes adds connections under two addresses, removes
// them in an order that swaps entries, moves one to another address, and
// checks after each change that every list holds exactly its connections,
// each at the index it keeps.
func TestPeerListsKeepIndexes(t *testing.T) {
	a := netip.MustParseAddrPort("192.0.2.1:443")
	b := netip.MustParseAddrPort("192.0.2.2:443")
	tr := &Transport{byPeer: map[netip.AddrPort][]*Conn{}}
	want := map[*Conn]netip.AddrPort{}
	var conns []*Conn
	for i := range 6 {
		c := &Conn{remote: a}
		if i%3 == 2 {
			c.remote = b
		}
		tr.addPeerLocked(c)
		want[c] = c.remote
		conns = append(conns, c)
	}
	check := func(step string) {
		t.Helper()
		n := 0
		for addr, list := range tr.byPeer {
			if len(list) == 0 {
				t.Fatalf("%s: empty list kept for %v", step, addr)
			}
			for i, c := range list {
				if c.peerIndex != i || want[c] != addr {
					t.Fatalf("%s: %v[%d] has index %d, address %v", step, addr, i, c.peerIndex, want[c])
				}
				n++
			}
		}
		if n != len(want) {
			t.Fatalf("%s: %d connections listed, want %d", step, n, len(want))
		}
	}
	check("added")
	for _, i := range []int{0, 4, 2} {
		tr.removePeerLocked(conns[i])
		delete(want, conns[i])
		check("removed")
	}
	// Removing twice changes nothing.
	tr.removePeerLocked(conns[0])
	check("removed again")
	// setRemote's move, without its connection mutex.
	c := conns[1]
	tr.removePeerLocked(c)
	c.remote = b
	tr.addPeerLocked(c)
	want[c] = b
	check("moved")
	for _, c := range []*Conn{conns[1], conns[3], conns[5]} {
		tr.removePeerLocked(c)
		delete(want, c)
		check("emptied")
	}
	if len(tr.byPeer) != 0 {
		t.Fatalf("%d addresses left", len(tr.byPeer))
	}
}
