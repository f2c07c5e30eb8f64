package connectip

import (
	"encoding/binary"
	"github.com/satquic/satquic/internal/inetsum"
	"net/netip"
)

// IP protocol numbers this package looks at.
const (
	protoICMP     = 1
	protoICMPv6   = 58
	ipv4HeaderMin = 20
	ipv6HeaderLen = 40
)

// IPv6 extension headers to walk past to find the upper-layer protocol
// (RFC 8200 section 4; RFC 9484 section 4.8 asks for the walk).
const (
	extHopByHop    = 0
	extRouting     = 43
	extFragment    = 44
	extAuth        = 51
	extDestOptions = 60
	// maxExtHeaders bounds the walk; a packet with more is not forwarded.
	maxExtHeaders = 8
)

// IPHeader is what the tunnel needs of an IP packet's header.
type IPHeader struct {
	Version  int // 4 or 6
	Src, Dst netip.Addr
	// Protocol is the upper-layer protocol: IPv4's Protocol field, or for
	// IPv6 the first Next Header that is not an extension header.
	Protocol uint8
	HopLimit uint8 // TTL for IPv4
	// HeaderLen is the length of the IPv4 header (options included) or of
	// the IPv6 fixed header.
	HeaderLen int
	// PayloadOffset is where the upper-layer header starts: HeaderLen for
	// IPv4, after the extension headers for IPv6.
	PayloadOffset int
}

// ParseIPHeader checks that p is one whole IPv4 or IPv6 packet (lengths
// consistent with len(p), the IPv4 header checksum right) and returns its
// header. It never reads outside p.
func ParseIPHeader(p []byte) (IPHeader, error) {
	if len(p) == 0 {
		return IPHeader{}, malformed("empty IP packet")
	}
	switch p[0] >> 4 {
	case 4:
		return parseIPv4(p)
	case 6:
		return parseIPv6(p)
	}
	return IPHeader{}, malformed("IP version %d", p[0]>>4)
}

func parseIPv4(p []byte) (IPHeader, error) {
	if len(p) < ipv4HeaderMin {
		return IPHeader{}, malformed("IPv4 packet of %d bytes", len(p))
	}
	hl := int(p[0]&0x0f) * 4
	if hl < ipv4HeaderMin || hl > len(p) {
		return IPHeader{}, malformed("IPv4 header length %d in a %d-byte packet", hl, len(p))
	}
	if total := int(binary.BigEndian.Uint16(p[2:4])); total != len(p) {
		return IPHeader{}, malformed("IPv4 total length %d, packet of %d bytes", total, len(p))
	}
	if checksum(0, p[:hl]) != 0 {
		return IPHeader{}, malformed("IPv4 header checksum")
	}
	return IPHeader{
		Version: 4, HeaderLen: hl, PayloadOffset: hl, HopLimit: p[8], Protocol: p[9],
		Src: netip.AddrFrom4([4]byte(p[12:16])), Dst: netip.AddrFrom4([4]byte(p[16:20])),
	}, nil
}

func parseIPv6(p []byte) (IPHeader, error) {
	if len(p) < ipv6HeaderLen {
		return IPHeader{}, malformed("IPv6 packet of %d bytes", len(p))
	}
	// A payload length of 0 would announce a jumbogram (RFC 2675), which
	// no tunnel link carries; it fails this check like any mismatch.
	if payload := int(binary.BigEndian.Uint16(p[4:6])); ipv6HeaderLen+payload != len(p) {
		return IPHeader{}, malformed("IPv6 payload length %d, packet of %d bytes", payload, len(p))
	}
	proto, ext, err := upperProtocol(p[6], p[ipv6HeaderLen:])
	if err != nil {
		return IPHeader{}, err
	}
	return IPHeader{
		Version: 6, HeaderLen: ipv6HeaderLen, PayloadOffset: ipv6HeaderLen + ext, HopLimit: p[7], Protocol: proto,
		Src: netip.AddrFrom16([16]byte(p[8:24])), Dst: netip.AddrFrom16([16]byte(p[24:40])),
	}, nil
}

// upperProtocol walks the IPv6 extension headers that start the payload
// and returns the first Next Header value that is not one, with the
// length of the headers walked.
func upperProtocol(next uint8, b []byte) (uint8, int, error) {
	offset := 0
	for range maxExtHeaders {
		var size int
		switch next {
		case extHopByHop, extRouting, extDestOptions:
			if len(b) < 2 {
				return 0, 0, malformed("truncated IPv6 extension header")
			}
			size = (int(b[1]) + 1) * 8
		case extFragment:
			size = 8
		case extAuth:
			if len(b) < 2 {
				return 0, 0, malformed("truncated IPv6 authentication header")
			}
			size = (int(b[1]) + 2) * 4
		default:
			return next, offset, nil
		}
		if len(b) < size {
			return 0, 0, malformed("truncated IPv6 extension header")
		}
		next, b, offset = b[0], b[size:], offset+size
	}
	return 0, 0, malformed("more than %d IPv6 extension headers", maxExtHeaders)
}

// decrementHopLimit lowers the TTL or Hop Limit of the well-formed packet
// p by one, as a router does when forwarding, and reports false, leaving
// p alone, when it would reach zero: the packet must then be dropped (RFC
// 9484 section 7.2; RFC 791, RFC 8200). The IPv4 header checksum is
// updated incrementally (RFC 1624).
func decrementHopLimit(p []byte) bool {
	if p[0]>>4 == 6 {
		if p[7] <= 1 {
			return false
		}
		p[7]--
		return true
	}
	if p[8] <= 1 {
		return false
	}
	// TTL is the high byte of the 16-bit word at offset 8: the word drops
	// by 0x0100, so the one's complement sum rises by it (RFC 1624 eqn 3).
	sum := uint32(binary.BigEndian.Uint16(p[10:12])) + 0x0100
	sum = sum&0xffff + sum>>16
	binary.BigEndian.PutUint16(p[10:12], uint16(sum))
	p[8]--
	return true
}

// checksum adds b to the one's complement sum initial and returns the
// complemented, folded result (RFC 1071): 0 over data that includes a
// correct checksum.
func checksum(initial uint32, b []byte) uint16 { return inetsum.Checksum(uint64(initial), b) }
