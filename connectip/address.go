package connectip

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrMalformed wraps every error about a capsule, datagram or IP packet
// whose fields break RFC 9484's rules.
var ErrMalformed = errors.New("malformed")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// AssignedAddress is one entry of an ADDRESS_ASSIGN capsule (RFC 9484
// section 4.7.1): a prefix the receiver may use as the source of its
// packets, and the request it answers (0 when unprompted).
type AssignedAddress struct {
	RequestID uint64
	Prefix    netip.Prefix
}

// RequestedAddress is one entry of an ADDRESS_REQUEST capsule (RFC 9484
// section 4.7.2). An unspecified address (0.0.0.0 or ::) asks for any
// address of that family, with Prefix.Bits() as the preferred length.
type RequestedAddress struct {
	RequestID uint64
	Prefix    netip.Prefix
}

// Rejected reports whether a is the answer to a request that was not
// granted: the all-zero address with the longest prefix (0.0.0.0/32 or
// ::/128, RFC 9484 section 4.7.2).
func (a AssignedAddress) Rejected() bool {
	return a.Prefix.Addr().IsUnspecified() && a.Prefix.Bits() == a.Prefix.Addr().BitLen()
}

// rejection is the Assigned Address answering request id when nothing
// was assigned for it (RFC 9484 section 4.7.2).
func rejection(id uint64, family netip.Addr) AssignedAddress {
	if family.Is4() {
		return AssignedAddress{RequestID: id, Prefix: netip.PrefixFrom(netip.IPv4Unspecified(), 32)}
	}
	return AssignedAddress{RequestID: id, Prefix: netip.PrefixFrom(netip.IPv6Unspecified(), 128)}
}

// AppendAddressAssign appends an ADDRESS_ASSIGN capsule carrying addrs,
// after checking each prefix as a receiver would.
func AppendAddressAssign(b []byte, addrs []AssignedAddress) ([]byte, error) {
	var payload []byte
	for _, a := range addrs {
		if err := checkPrefix(a.Prefix); err != nil {
			return b, err
		}
		if a.RequestID > maxVarint {
			return b, malformed("request ID %d exceeds 2^62-1", a.RequestID)
		}
		payload = appendAddressEntry(payload, a.RequestID, a.Prefix)
	}
	return AppendCapsule(b, CapsuleAddressAssign, payload), nil
}

// ParseAddressAssign decodes the payload of an ADDRESS_ASSIGN capsule.
// It may hold no address: everything assigned before is removed.
func ParseAddressAssign(payload []byte) ([]AssignedAddress, error) {
	var out []AssignedAddress
	for len(payload) > 0 {
		id, p, n, err := parseAddressEntry(payload)
		if err != nil {
			return nil, fmt.Errorf("ADDRESS_ASSIGN: %w", err)
		}
		out = append(out, AssignedAddress{RequestID: id, Prefix: p})
		payload = payload[n:]
	}
	return out, nil
}

// AppendAddressRequest appends an ADDRESS_REQUEST capsule carrying reqs,
// after checking them as a receiver would.
func AppendAddressRequest(b []byte, reqs []RequestedAddress) ([]byte, error) {
	if err := checkRequests(reqs); err != nil {
		return b, err
	}
	var payload []byte
	for _, r := range reqs {
		payload = appendAddressEntry(payload, r.RequestID, r.Prefix)
	}
	return AppendCapsule(b, CapsuleAddressRequest, payload), nil
}

// ParseAddressRequest decodes the payload of an ADDRESS_REQUEST capsule:
// at least one entry, every request ID non-zero and distinct (RFC 9484
// section 4.7.2).
func ParseAddressRequest(payload []byte) ([]RequestedAddress, error) {
	var out []RequestedAddress
	for len(payload) > 0 {
		id, p, n, err := parseAddressEntry(payload)
		if err != nil {
			return nil, fmt.Errorf("ADDRESS_REQUEST: %w", err)
		}
		out = append(out, RequestedAddress{RequestID: id, Prefix: p})
		payload = payload[n:]
	}
	if err := checkRequests(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkRequests applies section 4.7.2's rules to one capsule's requests:
// not empty, IDs non-zero and not repeated, prefixes well formed.
func checkRequests(reqs []RequestedAddress) error {
	if len(reqs) == 0 {
		return malformed("ADDRESS_REQUEST with no address")
	}
	seen := make(map[uint64]bool, len(reqs))
	for _, r := range reqs {
		if r.RequestID == 0 || r.RequestID > maxVarint {
			return malformed("ADDRESS_REQUEST: request ID %d (must be 1 to 2^62-1)", r.RequestID)
		}
		if seen[r.RequestID] {
			return malformed("ADDRESS_REQUEST: request ID %d repeated", r.RequestID)
		}
		seen[r.RequestID] = true
		if err := checkPrefix(r.Prefix); err != nil {
			return err
		}
	}
	return nil
}

// checkPrefix is the rule shared by both capsules: an IPv4 or IPv6
// address (not IPv4-mapped, no zone) whose bits beyond the prefix length
// are zero (RFC 9484 sections 4.7.1 and 4.7.2).
func checkPrefix(p netip.Prefix) error {
	a := p.Addr()
	if !p.IsValid() || a.Is4In6() || a.Zone() != "" {
		return malformed("address prefix %v is not a plain IPv4 or IPv6 prefix", p)
	}
	if p.Masked() != p {
		return malformed("address prefix %v has bits set beyond its length", p)
	}
	return nil
}

// appendAddressEntry appends Request ID (i), IP Version (8), IP Address
// (32 or 128), IP Prefix Length (8): the entry both capsules share.
func appendAddressEntry(b []byte, id uint64, p netip.Prefix) []byte {
	b = appendVarint(b, id)
	b = append(b, ipVersion(p.Addr()))
	b = append(b, p.Addr().AsSlice()...)
	return append(b, byte(p.Bits()))
}

func parseAddressEntry(b []byte) (uint64, netip.Prefix, int, error) {
	id, n, err := parseVarint(b)
	if err != nil {
		return 0, netip.Prefix{}, 0, malformed("request ID: %v", err)
	}
	addr, m, err := parseVersionedAddr(b[n:])
	if err != nil {
		return 0, netip.Prefix{}, 0, err
	}
	n += m
	if len(b) <= n {
		return 0, netip.Prefix{}, 0, malformed("truncated prefix length")
	}
	bits := int(b[n])
	if bits > addr.BitLen() {
		return 0, netip.Prefix{}, 0, malformed("prefix length %d for an IPv%d address", bits, ipVersion(addr))
	}
	p := netip.PrefixFrom(addr, bits)
	if err := checkPrefix(p); err != nil {
		return 0, netip.Prefix{}, 0, err
	}
	return id, p, n + 1, nil
}

// parseVersionedAddr reads IP Version (8) and the address of that
// version's length.
func parseVersionedAddr(b []byte) (netip.Addr, int, error) {
	if len(b) == 0 {
		return netip.Addr{}, 0, malformed("truncated IP version")
	}
	size, err := addrSize(b[0])
	if err != nil {
		return netip.Addr{}, 0, err
	}
	if len(b) < 1+size {
		return netip.Addr{}, 0, malformed("truncated IPv%d address", b[0])
	}
	a, _ := netip.AddrFromSlice(b[1 : 1+size])
	return a, 1 + size, nil
}

// addrSize is the length of an address of IP version v; only 4 and 6
// exist (RFC 9484 section 4.7).
func addrSize(v byte) (int, error) {
	switch v {
	case 4:
		return 4, nil
	case 6:
		return 16, nil
	}
	return 0, malformed("IP version %d (must be 4 or 6)", v)
}

func ipVersion(a netip.Addr) byte {
	if a.Is4() {
		return 4
	}
	return 6
}
