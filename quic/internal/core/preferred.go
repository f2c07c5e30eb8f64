package core

// A server's preferred address (RFC 9000 section 9.6): the server sends
// preferred_address with an address and a connection ID of its own
// (sequence number 1, section 18.2), and the client, once its handshake
// is confirmed, probes that address from its own, with that connection
// ID, and moves there when a PATH_RESPONSE comes back. The server sees the
// client's packets arrive for the new connection ID; the client's address
// does not change, so the server's path does not either.

import (
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// offerPreferredAddress issues the connection ID of a server's preferred
// address and puts preferred_address in its transport parameters.
func (c *Conn) offerPreferredAddress() error {
	if !c.cfg.PreferredIPv4.IsValid() && !c.cfg.PreferredIPv6.IsValid() {
		return nil
	}
	if err := c.cids.newLocal(&c.events); err != nil {
		return err
	}
	l := c.cids.local[len(c.cids.local)-1]
	c.localParams.PreferredAddress = &wire.PreferredAddress{
		IPv4: c.cfg.PreferredIPv4, IPv6: c.cfg.PreferredIPv6,
		ConnectionID: l.id, StatelessResetToken: l.token,
	}
	return nil
}

// takePreferredConnID adds the connection ID of the server's
// preferred_address to the server's connection IDs, as sequence number 1
// (RFC 9000 section 18.2).
func (ids *connIDs) takePreferredConnID(a *wire.PreferredAddress) error {
	for _, p := range ids.peer {
		if p.seq == 1 || p.id == a.ConnectionID {
			return transportError(wire.CodeProtocolViolation, 0, "preferred_address connection ID reused")
		}
	}
	ids.peer = append(ids.peer, peerCID{seq: 1, id: a.ConnectionID, token: a.StatelessResetToken, hasToken: true})
	return nil
}

// maybeProbePreferred starts a client's probe of the server's preferred
// address once the handshake is confirmed (RFC 9000 section 9.6.1), in
// the family of the address in use. A server that offers none, or none of
// that family, is not probed.
func (c *Conn) maybeProbePreferred(now time.Duration) {
	p := &c.path
	if !c.isClient || p.preferredDone || !c.handshakeConfirmed || c.state != stateActive {
		return
	}
	p.preferredDone = true
	pa := c.peerParams.PreferredAddress
	if pa == nil || p.probe.active {
		return
	}
	addr := pa.IPv6
	if c.remote.Addr().Is4() {
		addr = pa.IPv4
	}
	if !addr.IsValid() || addr == c.remote {
		return
	}
	p.probe = localProbe{active: true, dcid: pa.ConnectionID, addr: addr, due: true, deadline: now + c.validationTimeout()}
	c.qlog.pathUpdated(now, "probing_started", c.remote, addr)
}

// notePreferredUsed tells a server's driver, once, that the client's
// newest non-probing packet carried the connection ID of the preferred
// address, which the client uses only there (RFC 9000 section 9.6.1): the
// client moved, and the server answers from that address from now on.
func (c *Conn) notePreferredUsed(dcid wire.ConnectionID) {
	pa := c.localParams.PreferredAddress
	if c.isClient || pa == nil || c.path.preferredUsed || dcid != pa.ConnectionID {
		return
	}
	c.path.preferredUsed = true
	c.events.push(Event{Kind: EventPreferredAddressUsed})
}
