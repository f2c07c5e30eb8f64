package core

// A server validates a path the client probes before the client moves to
// it. When a PATH_CHALLENGE comes from an address other than the client's
// current one (the client probing a new local address, RFC 9000 section
// 9.2), the server answers with its PATH_RESPONSE and, in the same packet,
// a PATH_CHALLENGE of its own (section 8.2.1 lets other frames ride with
// them). A PATH_RESPONSE to that challenge proves the address, so that
// when the client's non-probing packets arrive from it the server moves
// there at once, without a validation round trip under the
// anti-amplification limit: section 9.3 lets an endpoint skip validating
// an address it saw validated recently. The move still restarts
// congestion control when the IP address changed (section 9.4): the path
// is new even though the address is proven.

import (
	"net/netip"
	"slices"
)

// aheadValidation is a server's validation of an address its client
// probes from.
type aheadValidation struct {
	// addr is the address challenged, challenges the values sent there
	// and not answered.
	addr       netip.AddrPort
	challenges [][8]byte
	// proven is the latest address a response proved.
	proven netip.AddrPort
}

// wantsAheadChallenge reports whether a datagram of responses to addr
// should carry a challenge too: a server's, to an address that is not
// its client's current one.
func (c *Conn) wantsAheadChallenge(addr netip.AddrPort) bool {
	return !c.isClient && addr != c.remote && addr != c.path.ahead.proven
}

// appendAheadChallenge appends a PATH_CHALLENGE for addr to w and
// remembers its data; a new address forgets the challenges of the last.
func (c *Conn) appendAheadChallenge(w *packetWriter, addr netip.AddrPort) error {
	a := &c.path.ahead
	data, ok, err := c.writeChallenge(w)
	if !ok {
		return err
	}
	if a.addr != addr {
		a.addr, a.challenges = addr, a.challenges[:0]
		c.path.stats.Validations++
	}
	a.challenges = rememberChallenge(a.challenges, data)
	c.path.stats.ChallengesSent++
	return nil
}

// answersAhead takes a PATH_RESPONSE that answers a challenge sent ahead,
// and reports whether it did.
func (a *aheadValidation) answersAhead(data [8]byte) bool {
	if !slices.Contains(a.challenges, data) {
		return false
	}
	a.proven = a.addr
	a.challenges = a.challenges[:0]
	return true
}
