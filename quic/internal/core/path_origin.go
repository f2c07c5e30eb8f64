package core

// Where a client accepts datagrams from (RFC 9000 section 9: "If a client
// receives packets from an unknown server address, the client MUST
// discard these packets"). A server does not migrate; it only offers
// another address in preferred_address (section 9.6). So a client
// processes what comes from the server's address in use, c.remote, and
// besides it only:
//   - the preferred address while the client probes it (section 9.6.1);
//   - the server's former address for a while after the client moved to
//     the preferred one: the server goes on sending from there until the
//     client's non-probing packets reach it at the preferred address
//     (section 9.6.2), and those packets may arrive late over the other
//     path.
// A probe of a new local address (ProbePath, the driver's Migrate) goes
// to c.remote and is answered from it: that path is the server's address
// in use. Everything else is dropped before any of it is parsed, and
// counted (PathStats.UnknownServerAddress): a copy of the server's
// packets sent from elsewhere by an attacker must not reach the
// connection's state, whose packets would otherwise be authentic.

import (
	"net/netip"
	"time"
)

// fromServer reports whether a client takes a datagram from addr at now.
// A server takes datagrams from any address: its path follows the client
// (path.go).
func (c *Conn) fromServer(now time.Duration, addr netip.AddrPort) bool {
	if !c.isClient || sameAddrPort(addr, c.remote) {
		return true
	}
	p := &c.path
	if p.probe.active && p.probe.addr.IsValid() && sameAddrPort(addr, p.probe.addr) {
		return true
	}
	return p.formerServer.IsValid() && now < p.formerUntil && sameAddrPort(addr, p.formerServer)
}

// leftServerAddress notes that a client moved from the server's address
// old to its preferred one at now: old's datagrams are still taken for a
// path validation's time (validationTimeout), room for the round trip in
// which the server has not yet seen the client at its preferred address.
func (c *Conn) leftServerAddress(now time.Duration, old netip.AddrPort) {
	c.path.formerServer = old
	c.path.formerUntil = now + c.validationTimeout()
}

// sameAddrPort compares addresses without their IPv6 zones, which a
// socket may give on a received datagram and not on the one dialed, or
// the other way round.
func sameAddrPort(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().WithZone("") == b.Addr().WithZone("")
}
