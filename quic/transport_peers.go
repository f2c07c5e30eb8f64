package quic

// The connections to each peer address (Transport.byPeer): a datagram
// for no connection from an address with connections is never answered
// with a Stateless Reset. A load generator or a NAT puts hundreds of
// connections behind one address: each connection keeps its index in its
// address's list, so that leaving the list takes a swap with the last
// entry rather than a scan of the list under the Transport's lock, which
// cost a server about 2% of its processor time when 200 connections
// from one address came and went.

// addPeerLocked lists c under its address; t.mu is held.
func (t *Transport) addPeerLocked(c *Conn) {
	list := t.byPeer[c.remote]
	c.peerIndex = len(list)
	t.byPeer[c.remote] = append(list, c)
}

// removePeerLocked takes c out of its address's list; t.mu is held. A
// connection not in the list (never added, or removed already) leaves it
// as it is.
func (t *Transport) removePeerLocked(c *Conn) {
	list := t.byPeer[c.remote]
	i := c.peerIndex
	if i < 0 || i >= len(list) || list[i] != c {
		return
	}
	last := len(list) - 1
	list[i] = list[last]
	list[i].peerIndex = i
	list[last] = nil
	c.peerIndex = -1
	if last == 0 {
		delete(t.byPeer, c.remote)
		return
	}
	t.byPeer[c.remote] = list[:last]
}
