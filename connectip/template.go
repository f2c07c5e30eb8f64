package connectip

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// WellKnownPath is the path of the default URI template of RFC 9484
// section 3, "/.well-known/masque/ip/{target}/{ipproto}/", before its
// variables.
const WellKnownPath = "/.well-known/masque/ip/"

// AnyProtocol is the Scope.Protocol of a request for every IP protocol
// (ipproto "*").
const AnyProtocol = -1

// Scope is what a request limits its tunnel to (RFC 9484 section 4.6):
// a target and an IP protocol.
type Scope struct {
	// Host is a DNS name target, which the proxy resolves.
	Host string
	// Prefix is an IP prefix target; a single address is a prefix of full
	// length. With neither Host nor Prefix the target is any host ("*").
	Prefix netip.Prefix
	// Protocol is an IP protocol number, or AnyProtocol.
	Protocol int
}

// AnyScope is the scope of a request without limits ("*/*").
var AnyScope = Scope{Protocol: AnyProtocol}

// Path returns the path of the default template for s, its variables
// percent-encoded as section 4.6 demands: colons of an IPv6 target as %3A
// and the slash before a prefix length as %2F.
func (s Scope) Path() string {
	target := "*"
	switch {
	case s.Host != "":
		target = s.Host
	case s.Prefix.IsValid():
		target = strings.ReplaceAll(s.Prefix.Addr().String(), ":", "%3A")
		if s.Prefix.Bits() < s.Prefix.Addr().BitLen() {
			target += "%2F" + strconv.Itoa(s.Prefix.Bits())
		}
	}
	proto := "*"
	if s.Protocol >= 0 {
		proto = strconv.Itoa(s.Protocol)
	}
	return WellKnownPath + target + "/" + proto + "/"
}

// ParseScopePath reads the scope from a request path of the default
// template. It takes the path as sent, still percent-encoded
// (http.Request.URL.EscapedPath()), since a decoded %2F would split the
// target. An empty variable means "*" (section 4.6).
func ParseScopePath(path string) (Scope, error) {
	rest, ok := strings.CutPrefix(path, WellKnownPath)
	if !ok {
		return Scope{}, fmt.Errorf("connectip: path %q is not under %s", path, WellKnownPath)
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[2] != "" {
		return Scope{}, fmt.Errorf("connectip: path %q is not %s{target}/{ipproto}/", path, WellKnownPath)
	}
	s, err := parseTarget(parts[0])
	if err != nil {
		return Scope{}, err
	}
	s.Protocol, err = parseIPProto(parts[1])
	return s, err
}

// parseTarget reads the target variable: "*", an IPv4 or IPv6 address
// with an optional %2F and prefix length whose uncovered bits are zero, or
// a host name.
func parseTarget(t string) (Scope, error) {
	if isWildcard(t) {
		return Scope{Protocol: AnyProtocol}, nil
	}
	decoded := strings.NewReplacer("%3A", ":", "%3a", ":", "%2F", "/", "%2f", "/").Replace(t)
	addrPart, bitsPart, hasBits := strings.Cut(decoded, "/")
	if a, err := netip.ParseAddr(addrPart); err == nil {
		if a.Zone() != "" || a.Is4In6() {
			return Scope{}, fmt.Errorf("connectip: target %q: zones and IPv4-mapped addresses are not supported", t)
		}
		bits := a.BitLen()
		if hasBits {
			if bits, err = parseDecimal(bitsPart, a.BitLen()); err != nil {
				return Scope{}, fmt.Errorf("connectip: target %q: prefix length: %w", t, err)
			}
		}
		p := netip.PrefixFrom(a, bits)
		if p.Masked() != p {
			return Scope{}, fmt.Errorf("connectip: target %q has bits set beyond its prefix length", t)
		}
		return Scope{Prefix: p}, nil
	}
	if !validHost(t) {
		return Scope{}, fmt.Errorf("connectip: target %q is neither an IP prefix nor a host name", t)
	}
	return Scope{Host: t}, nil
}

// validHost accepts DNS names: letters, digits, hyphens and dots, at most
// 253 characters.
func validHost(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, c := range h {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

// parseIPProto reads the ipproto variable: "*" (or empty) or 0 to 255.
func parseIPProto(v string) (int, error) {
	if isWildcard(v) {
		return AnyProtocol, nil
	}
	n, err := parseDecimal(v, 255)
	if err != nil {
		return 0, fmt.Errorf("connectip: ipproto %q: %w", v, err)
	}
	return n, nil
}

// parseDecimal reads 1 to 3 decimal digits holding at most limit.
func parseDecimal(v string, limit int) (int, error) {
	if len(v) == 0 || len(v) > 3 || strings.Trim(v, "0123456789") != "" {
		return 0, fmt.Errorf("not 1 to 3 decimal digits")
	}
	n, _ := strconv.Atoi(v)
	if n > limit {
		return 0, fmt.Errorf("%d exceeds %d", n, limit)
	}
	return n, nil
}

// isWildcard reports whether a variable is empty or "*", which a URI
// template's simple expansion writes percent-encoded, "%2A" (RFC 6570
// section 3.2.2: "*" is a reserved character).
func isWildcard(v string) bool {
	return v == "" || v == "*" || strings.EqualFold(v, "%2A")
}
