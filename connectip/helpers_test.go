package connectip

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// testPacket builds a well-formed IP packet of the given total size from
// src to dst carrying protocol proto, with hop limit ttl.
func testPacket(t testing.TB, src, dst string, proto uint8, size int, ttl uint8) []byte {
	t.Helper()
	s, d := netip.MustParseAddr(src), netip.MustParseAddr(dst)
	var b []byte
	if s.Is4() {
		b = appendIPv4Header(nil, s, d, proto, size-ipv4HeaderMin)
		b[8] = ttl
		binary.BigEndian.PutUint16(b[10:12], 0)
		binary.BigEndian.PutUint16(b[10:12], checksum(0, b[:ipv4HeaderMin]))
	} else {
		b = appendIPv6Header(nil, s, d, proto, size-ipv6HeaderLen)
		b[7] = ttl
	}
	for len(b) < size {
		b = append(b, byte(len(b)))
	}
	return b
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
