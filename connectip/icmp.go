package connectip

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// ICMP messages the tunnel generates.
const (
	icmpv4DestUnreachable = 3
	icmpv4FragNeeded      = 4 // code of Destination Unreachable (RFC 792, RFC 1191)
	icmpv4TimeExceeded    = 11
	icmpv6PacketTooBig    = 2 // RFC 4443 section 3.2
	icmpv6TimeExceeded    = 3 // RFC 4443 section 3.3

	// icmpHopLimit is the TTL of the ICMP messages generated here.
	icmpHopLimit = 64
	// An ICMPv4 error quotes as much of the packet as fits in 576 bytes
	// (RFC 1812 section 4.3.2.3); an ICMPv6 one in the minimum IPv6 MTU,
	// 1280 bytes (RFC 4443 section 2.4 (c)).
	icmpv4MaxLen = 576
	icmpv6MaxLen = 1280
	icmpHeader   = 8
)

// errNoICMP is returned for packets that must not be answered with an
// ICMP error (RFC 1122 section 3.2.2, RFC 1812 section 4.3.2.7, RFC 4443
// section 2.4 (e)).
var errNoICMP = errors.New("no ICMP error is sent about this packet")

// PacketTooBig returns the ICMP message that tells the sender of packet
// orig that the tunnel carries IP packets of at most mtu bytes: ICMPv6
// Packet Too Big (RFC 4443 section 3.2) or ICMPv4 Destination Unreachable,
// Fragmentation Needed (RFC 1191 section 4), with the next-hop MTU. A
// kernel receiving it lowers its path MTU for the destination, so inner
// TCP shrinks its segments (RFC 9484 section 10.1). src is the message's
// source; when it is not of orig's IP version, orig's destination is used,
// which every stack accepts for path MTU discovery and which, unlike a
// local address, is no martian where the message is delivered.
func PacketTooBig(orig []byte, mtu int, src netip.Addr) ([]byte, error) {
	h, err := ParseIPHeader(orig)
	if err != nil {
		return nil, err
	}
	if !answerable(h, orig) {
		return nil, errNoICMP
	}
	if h.Version == 4 {
		var rest [4]byte
		binary.BigEndian.PutUint16(rest[2:], uint16(min(mtu, 0xffff)))
		return icmpError(h, orig, src, icmpv4DestUnreachable, icmpv4FragNeeded, rest), nil
	}
	var rest [4]byte
	binary.BigEndian.PutUint32(rest[:], uint32(max(mtu, 0)))
	return icmpError(h, orig, src, icmpv6PacketTooBig, 0, rest), nil
}

// TimeExceeded returns the ICMP Time Exceeded message (code 0, hop limit
// exceeded in transit: RFC 792, RFC 4443 section 3.3) for a packet dropped
// because its TTL or Hop Limit ran out; src as for PacketTooBig.
func TimeExceeded(orig []byte, src netip.Addr) ([]byte, error) {
	h, err := ParseIPHeader(orig)
	if err != nil {
		return nil, err
	}
	if !answerable(h, orig) {
		return nil, errNoICMP
	}
	typ := uint8(icmpv6TimeExceeded)
	if h.Version == 4 {
		typ = icmpv4TimeExceeded
	}
	return icmpError(h, orig, src, typ, 0, [4]byte{}), nil
}

// answerable says whether an ICMP error may be sent about the packet: not
// about an ICMP error, nor a packet whose source does not name one host,
// nor an IPv4 packet to a multicast or broadcast address or a fragment
// other than the first.
func answerable(h IPHeader, p []byte) bool {
	if h.Src.IsUnspecified() || h.Src.IsMulticast() || h.Src.IsLoopback() || h.Src == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return false
	}
	if h.Version == 4 {
		if h.Dst.IsMulticast() || h.Dst == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
			return false
		}
		if binary.BigEndian.Uint16(p[6:8])&0x1fff != 0 {
			return false
		}
	}
	return !isICMPError(h, p)
}

// isICMPError reports whether p carries an ICMP error message: for ICMPv4
// the types that are not queries (RFC 792), for ICMPv6 the types below
// 128 (RFC 4443 section 2.1). An ICMP header cut short counts as an error,
// so that no answer is sent.
func isICMPError(h IPHeader, p []byte) bool {
	if !isICMP(h.Dst, h.Protocol) {
		return false
	}
	if h.PayloadOffset >= len(p) {
		return true
	}
	typ := p[h.PayloadOffset]
	if h.Version == 6 {
		return typ < 128
	}
	switch typ {
	case 0, 8, 13, 14, 15, 16, 17, 18: // echo, timestamp, information, mask
		return false
	}
	return true
}

// icmpError builds an IP packet to orig's source carrying an ICMP error of
// the given type and code, with rest as the four bytes after the checksum
// and as much of orig as the size limit of the IP version allows.
func icmpError(h IPHeader, orig []byte, src netip.Addr, typ, code uint8, rest [4]byte) []byte {
	if !src.IsValid() || src.BitLen() != h.Dst.BitLen() {
		src = h.Dst
	}
	limit, hdr := icmpv6MaxLen, ipv6HeaderLen
	if h.Version == 4 {
		limit, hdr = icmpv4MaxLen, ipv4HeaderMin
	}
	quote := orig[:min(len(orig), limit-hdr-icmpHeader)]
	msgLen := icmpHeader + len(quote)
	b := make([]byte, 0, hdr+msgLen)
	if h.Version == 4 {
		b = appendIPv4Header(b, src, h.Src, protoICMP, msgLen)
	} else {
		b = appendIPv6Header(b, src, h.Src, protoICMPv6, msgLen)
	}
	b = append(b, typ, code, 0, 0)
	b = append(b, rest[:]...)
	b = append(b, quote...)
	msg := b[hdr:]
	var pseudo uint32
	if h.Version == 6 {
		pseudo = pseudoHeaderSum(src, h.Src, protoICMPv6, msgLen)
	}
	binary.BigEndian.PutUint16(msg[2:4], checksum(pseudo, msg))
	return b
}

// appendIPv4Header appends a 20-byte IPv4 header, checksum included, for a
// payload of n bytes.
func appendIPv4Header(b []byte, src, dst netip.Addr, proto uint8, n int) []byte {
	start := len(b)
	b = append(b, 0x45, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(ipv4HeaderMin+n))
	b = append(b, 0, 0, 0, 0, icmpHopLimit, proto, 0, 0)
	b = append(b, src.AsSlice()...)
	b = append(b, dst.AsSlice()...)
	binary.BigEndian.PutUint16(b[start+10:start+12], checksum(0, b[start:]))
	return b
}

// appendIPv6Header appends a 40-byte IPv6 header for a payload of n bytes.
func appendIPv6Header(b []byte, src, dst netip.Addr, next uint8, n int) []byte {
	b = append(b, 0x60, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(n))
	b = append(b, next, icmpHopLimit)
	b = append(b, src.AsSlice()...)
	return append(b, dst.AsSlice()...)
}

// pseudoHeaderSum is the unfolded one's complement sum of the IPv6
// pseudo-header (RFC 8200 section 8.1).
func pseudoHeaderSum(src, dst netip.Addr, next uint8, n int) uint32 {
	var sum uint32
	for _, a := range [2][16]byte{src.As16(), dst.As16()} {
		for i := 0; i < 16; i += 2 {
			sum += uint32(binary.BigEndian.Uint16(a[i:]))
		}
	}
	return sum + uint32(n>>16) + uint32(n&0xffff) + uint32(next)
}
