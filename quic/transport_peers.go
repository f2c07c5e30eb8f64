package quic

// How many connections go to each peer address (Transport.peerConns): a
// datagram for no connection from an address with connections is never
// answered with a Stateless Reset, so that two endpoints cannot reset
// each other in turn. A Stateless Reset itself finds its connection by
// its token (transport_resets.go), so a count is all an address needs:
// a load generator or a NAT puts hundreds of connections behind one
// address, which come and go under the Transport's lock.

// addPeerLocked counts c under its address; t.mu is held.
func (t *Transport) addPeerLocked(c *Conn) {
	t.peerConns[c.remote]++
	c.peerCounted = true
}

// removePeerLocked stops counting c under its address; t.mu is held. A
// connection not counted (never added, or removed already) changes
// nothing.
func (t *Transport) removePeerLocked(c *Conn) {
	if !c.peerCounted {
		return
	}
	c.peerCounted = false
	if n := t.peerConns[c.remote] - 1; n > 0 {
		t.peerConns[c.remote] = n
		return
	}
	delete(t.peerConns, c.remote)
}
