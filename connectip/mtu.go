package connectip

import (
	"fmt"
	"net/netip"
)

// The smallest MTU a link of each IP version may have: 68 bytes for IPv4
// (RFC 791), 1280 for IPv6 (RFC 8200 section 5).
const (
	minIPv4MTU = 68
	minIPv6MTU = 1280
)

// checkMTU refuses a tunnel MTU below the minimum of an IP version the
// tunnel carries: an IPv6 tunnel link must carry 1280-byte packets, and an
// endpoint that cannot must abort (RFC 9484 section 7.2).
func checkMTU(mtu int, v6 bool) error {
	if mtu < minIPv4MTU {
		return fmt.Errorf("connectip: a tunnel MTU of %d is below IPv4's minimum of %d", mtu, minIPv4MTU)
	}
	if v6 && mtu < minIPv6MTU {
		return fmt.Errorf("connectip: a tunnel MTU of %d is below IPv6's minimum of %d, and the tunnel carries IPv6 (RFC 9484 section 7.2)", mtu, minIPv6MTU)
	}
	return nil
}

// carriesIPv6 reports whether any of the prefixes or routes is IPv6.
func carriesIPv6(prefixes []netip.Prefix, routes []IPRoute) bool {
	for _, p := range prefixes {
		if p.Addr().Is6() {
			return true
		}
	}
	for _, r := range routes {
		if r.Start.Is6() {
			return true
		}
	}
	return false
}

// PathLimiter is a Carrier whose path may for a while carry smaller
// packets than Config.MTU: a QUIC path whose MTU fell (a black hole found
// by the packetization layer, RFC 8899 section 4.3). PacketLimit returns
// the largest IP packet the carrier takes now, or 0 when nothing smaller
// than Config.MTU is known; it is called once per WritePacket or
// WritePackets call, so it must be cheap while the path is whole.
type PathLimiter interface {
	PacketLimit() int
}

// pathLimit is the carrier's PacketLimit, 0 when it has none.
func (s *Session) pathLimit() int {
	if l, ok := s.c.(PathLimiter); ok {
		return l.PacketLimit()
	}
	return 0
}

// packetMTU is the largest packet of IP version v the session sends while
// the carrier takes packets of at most limit bytes (0: no limit below
// Config.MTU). A sender told a smaller MTU by ICMP Packet Too Big sends
// smaller packets instead of having them dropped in silence (RFC 9484
// section 10.1); the MTU told is never below the version's minimum (RFC
// 8201 section 4: an IPv6 node does not go below 1280), and packets the
// path cannot carry even then are left to the carrier, which drops them.
func (s *Session) packetMTU(limit, v int) int {
	if limit <= 0 || limit >= s.cfg.MTU {
		return s.cfg.MTU
	}
	if v == 6 {
		return max(limit, minIPv6MTU)
	}
	return max(limit, minIPv4MTU)
}
