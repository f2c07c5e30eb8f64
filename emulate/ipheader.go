//go:build linux

package emulate

import (
	"encoding/binary"
	"github.com/satquic/satquic/internal/inetsum"
	"net/netip"
)

const (
	ipv4HeaderLen = 20
	ipv6HeaderLen = 40
	udpHeaderLen  = 8
	protoUDP      = 17
)

// udpOverhead is what the IP and UDP headers add to a datagram of the
// given address family on the wire.
func udpOverhead(v6 bool) int {
	if v6 {
		return ipv6HeaderLen + udpHeaderLen
	}
	return ipv4HeaderLen + udpHeaderLen
}

// appendIPUDPHeader appends the IPv4 or IPv6 and UDP headers a datagram
// carrying payload from src to dst would have, checksums included, so that
// relay-mode captures open in any pcap reader. IPv4 is used when both
// addresses are IPv4.
func appendIPUDPHeader(b []byte, src, dst netip.AddrPort, payload []byte) []byte {
	s, d := src.Addr().Unmap(), dst.Addr().Unmap()
	udpLen := udpHeaderLen + len(payload)
	var pseudo uint64
	if s.Is4() && d.Is4() {
		b = appendIPv4Header(b, s, d, udpLen)
		pseudo = inetsum.Sum(0, s.AsSlice()) + inetsum.Sum(0, d.AsSlice())
	} else {
		s, d = netip.AddrFrom16(s.As16()), netip.AddrFrom16(d.As16())
		b = appendIPv6Header(b, s, d, udpLen)
		pseudo = inetsum.Sum(0, s.AsSlice()) + inetsum.Sum(0, d.AsSlice())
	}
	// RFC 768 pseudo-header: addresses, protocol, UDP length.
	pseudo += protoUDP + uint64(udpLen)
	udp := len(b)
	b = binary.BigEndian.AppendUint16(b, src.Port())
	b = binary.BigEndian.AppendUint16(b, dst.Port())
	b = binary.BigEndian.AppendUint16(b, uint16(udpLen))
	b = append(b, 0, 0)
	sum := fold(inetsum.Sum(inetsum.Sum(pseudo, b[udp:]), payload))
	if sum == 0 {
		sum = 0xffff // RFC 768: a computed zero is sent as all ones
	}
	binary.BigEndian.PutUint16(b[udp+6:], sum)
	return b
}

func appendIPv4Header(b []byte, src, dst netip.Addr, payloadLen int) []byte {
	h := len(b)
	b = append(b, 0x45, 0) // version 4, 20-byte header, DSCP/ECN 0
	b = binary.BigEndian.AppendUint16(b, uint16(ipv4HeaderLen+payloadLen))
	b = append(b, 0, 0, 0x40, 0, 64, protoUDP, 0, 0) // id 0, DF, TTL 64
	b = append(b, src.AsSlice()...)
	b = append(b, dst.AsSlice()...)
	binary.BigEndian.PutUint16(b[h+10:], fold(inetsum.Sum(0, b[h:])))
	return b
}

func appendIPv6Header(b []byte, src, dst netip.Addr, payloadLen int) []byte {
	b = append(b, 0x60, 0, 0, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(payloadLen))
	b = append(b, protoUDP, 64)
	b = append(b, src.AsSlice()...)
	return append(b, dst.AsSlice()...)
}

// fold finishes an RFC 1071 checksum of the sum acc: carries folded in,
// complemented.
func fold(acc uint64) uint16 { return ^inetsum.Fold(acc) }

// markCE sets the ECN field of an IP packet to Congestion Experienced
// (RFC 3168 section 5) and reports whether it could: a packet whose sender
// did not declare ECN capability (Not-ECT) must be dropped instead.
func markCE(pkt []byte) bool {
	if len(pkt) < 1 {
		return false
	}
	switch pkt[0] >> 4 {
	case 4:
		if len(pkt) < ipv4HeaderLen || pkt[1]&3 == 0 {
			return false
		}
		ihl := int(pkt[0]&0x0f) * 4
		if ihl < ipv4HeaderLen || len(pkt) < ihl {
			return false
		}
		pkt[1] |= 3
		pkt[10], pkt[11] = 0, 0
		binary.BigEndian.PutUint16(pkt[10:], fold(inetsum.Sum(0, pkt[:ihl])))
		return true
	case 6:
		// The traffic class straddles bytes 0 and 1; ECN is its low two bits.
		if len(pkt) < ipv6HeaderLen || (pkt[1]>>4)&3 == 0 {
			return false
		}
		pkt[1] |= 0x30
		return true
	}
	return false
}
