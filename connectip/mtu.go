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
