package connectip

import (
	"fmt"
	"net/netip"
	"sort"
)

// IPRoute is one IP Address Range of a ROUTE_ADVERTISEMENT capsule (RFC
// 9484 section 4.7.3): the inclusive range Start..End of one IP version,
// for IP protocol Protocol (0 means every protocol). ICMP is allowed to
// any advertised range whatever its protocol.
type IPRoute struct {
	Start, End netip.Addr
	Protocol   uint8
}

// RouteFromPrefix is the route to every address of p for protocol proto.
func RouteFromPrefix(p netip.Prefix, proto uint8) IPRoute {
	p = p.Masked()
	return IPRoute{Start: p.Addr(), End: lastAddr(p), Protocol: proto}
}

// Contains reports whether a is within the range.
func (r IPRoute) Contains(a netip.Addr) bool {
	return a.BitLen() == r.Start.BitLen() && r.Start.Compare(a) <= 0 && a.Compare(r.End) <= 0
}

// Allows reports whether a packet of IP protocol proto to dst may use
// the route.
func (r IPRoute) Allows(dst netip.Addr, proto uint8) bool {
	return r.Contains(dst) && (r.Protocol == 0 || r.Protocol == proto || isICMP(dst, proto))
}

func (r IPRoute) String() string {
	return fmt.Sprintf("%v-%v proto %d", r.Start, r.End, r.Protocol)
}

// AppendRouteAdvertisement appends a ROUTE_ADVERTISEMENT capsule carrying
// routes, which must already be in the order section 4.7.3 demands (see
// SortRoutes).
func AppendRouteAdvertisement(b []byte, routes []IPRoute) ([]byte, error) {
	if err := CheckRoutes(routes); err != nil {
		return b, err
	}
	var payload []byte
	for _, r := range routes {
		payload = append(payload, ipVersion(r.Start))
		payload = append(payload, r.Start.AsSlice()...)
		payload = append(payload, r.End.AsSlice()...)
		payload = append(payload, r.Protocol)
	}
	return AppendCapsule(b, CapsuleRouteAdvertisement, payload), nil
}

// ParseRouteAdvertisement decodes and checks the payload of a
// ROUTE_ADVERTISEMENT capsule. It may hold no range: every route is
// withdrawn.
func ParseRouteAdvertisement(payload []byte) ([]IPRoute, error) {
	var out []IPRoute
	for len(payload) > 0 {
		start, n, err := parseVersionedAddr(payload)
		if err != nil {
			return nil, fmt.Errorf("ROUTE_ADVERTISEMENT: %w", err)
		}
		size := n - 1
		if len(payload) < n+size+1 {
			return nil, malformed("ROUTE_ADVERTISEMENT: truncated range")
		}
		end, _ := netip.AddrFromSlice(payload[n : n+size])
		out = append(out, IPRoute{Start: start, End: end, Protocol: payload[n+size]})
		payload = payload[n+size+1:]
	}
	if err := CheckRoutes(out); err != nil {
		return nil, err
	}
	return out, nil
}

// CheckRoutes applies section 4.7.3's rules to one capsule's ranges:
// Start <= End within one IP version; ordered by version, then protocol,
// then address, with ranges of the same version and protocol not touching
// each other's addresses; and (the check the RFC makes optional) no range
// of a given protocol overlapping a range of protocol 0.
func CheckRoutes(routes []IPRoute) error {
	for i, r := range routes {
		if !r.Start.IsValid() || r.Start.Is4In6() || r.Start.Zone() != "" || r.Start.BitLen() != r.End.BitLen() || r.End.Zone() != "" {
			return malformed("ROUTE_ADVERTISEMENT: range %d (%v) is not of one plain IP version", i, r)
		}
		if r.End.Less(r.Start) {
			return malformed("ROUTE_ADVERTISEMENT: range %d ends before it starts (%v)", i, r)
		}
		if i > 0 && !routePrecedes(routes[i-1], r) {
			return malformed("ROUTE_ADVERTISEMENT: range %d (%v) is not after range %d (%v)", i, r, i-1, routes[i-1])
		}
	}
	return checkAnyProtocolOverlap(routes)
}

// routePrecedes is section 4.7.3's order: version, then protocol, then a
// strictly lower end than the next start.
func routePrecedes(a, b IPRoute) bool {
	va, vb := ipVersion(a.Start), ipVersion(b.Start)
	if va != vb {
		return va < vb
	}
	if a.Protocol != b.Protocol {
		return a.Protocol < b.Protocol
	}
	return a.End.Less(b.Start)
}

// checkAnyProtocolOverlap rejects a range of a given protocol that
// overlaps a protocol-0 range of its version. The ordering puts each
// version's protocol-0 ranges first, sorted and disjoint, so a binary
// search finds the candidate.
func checkAnyProtocolOverlap(routes []IPRoute) error {
	var any4, any6 []IPRoute
	for _, r := range routes {
		if r.Protocol == 0 {
			if r.Start.Is4() {
				any4 = append(any4, r)
			} else {
				any6 = append(any6, r)
			}
		}
	}
	for _, r := range routes {
		if r.Protocol == 0 {
			continue
		}
		anyRoutes := any6
		if r.Start.Is4() {
			anyRoutes = any4
		}
		// The first protocol-0 range that ends at or after r's start is
		// the only one that can overlap r without an earlier one doing so.
		i := sort.Search(len(anyRoutes), func(i int) bool { return !anyRoutes[i].End.Less(r.Start) })
		if i < len(anyRoutes) && !r.End.Less(anyRoutes[i].Start) {
			return malformed("ROUTE_ADVERTISEMENT: range %v overlaps %v, which allows every protocol", r, anyRoutes[i])
		}
	}
	return nil
}

// SortRoutes puts routes in the order section 4.7.3 demands. It does not
// merge overlapping ranges: CheckRoutes still rejects those.
func SortRoutes(routes []IPRoute) {
	sort.Slice(routes, func(i, j int) bool {
		a, b := routes[i], routes[j]
		if va, vb := ipVersion(a.Start), ipVersion(b.Start); va != vb {
			return va < vb
		}
		if a.Protocol != b.Protocol {
			return a.Protocol < b.Protocol
		}
		return a.Start.Less(b.Start)
	})
}

// RangePrefixes splits the range Start..End into the fewest prefixes that
// cover exactly it, for a routing table that takes only prefixes.
func (r IPRoute) RangePrefixes() []netip.Prefix {
	var out []netip.Prefix
	start := r.Start
	for start.IsValid() && !r.End.Less(start) {
		// The largest prefix that starts at start and stays within End.
		bits := start.BitLen()
		for bits > 0 {
			p := netip.PrefixFrom(start, bits-1)
			if p.Masked().Addr() != start || r.End.Less(lastAddr(p)) {
				break
			}
			bits--
		}
		p := netip.PrefixFrom(start, bits)
		out = append(out, p)
		start = lastAddr(p).Next()
	}
	return out
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(a)*8; i++ {
		a[i/8] |= 0x80 >> (i % 8)
	}
	last, _ := netip.AddrFromSlice(a)
	return last
}

// isICMP reports whether proto is the ICMP of dst's IP version, which
// routes and scopes always allow (RFC 9484 sections 4.6 and 4.7.3).
func isICMP(dst netip.Addr, proto uint8) bool {
	if dst.Is4() {
		return proto == protoICMP
	}
	return proto == protoICMPv6
}
