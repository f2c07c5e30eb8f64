package gateway

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/satquic/satquic/internal/testkit"
)

// The interop and rebinding tests send real IPv4/UDP packets, with both
// checksums right, since connect-ip-go checks the IPv4 header checksum
// and total length of what it forwards (RFC 9484 section 7.2 lets a
// tunnel endpoint drop malformed packets), and check on arrival that only
// what a router may change changed.

const (
	ipv6HeaderLen = 40
	ipv4HeaderLen = 20
	udpHeaderLen  = 8
	protoUDP      = 17
	protoICMP     = 1
	sentTTL       = 64
)

// onesSum is the 16-bit ones' complement sum of b (odd lengths padded
// with a zero byte) added to sum, folded (RFC 1071).
func onesSum(b []byte, sum uint32) uint16 {
	for len(b) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// udpPseudoSum is the sum of the pseudo-header that the UDP checksum
// covers: addresses, protocol and UDP length (RFC 768 for IPv4, RFC 8200
// section 8.1 for IPv6, where the sum comes out the same).
func udpPseudoSum(src, dst netip.Addr, udpLen int) uint32 {
	s, d := src.AsSlice(), dst.AsSlice()
	return uint32(onesSum(s, 0)) + uint32(onesSum(d, 0)) + protoUDP + uint32(udpLen)
}

// putUDP writes the UDP header of u, whose payload is in place, with its
// checksum.
func putUDP(u []byte, src, dst netip.Addr, sport, dport uint16) {
	binary.BigEndian.PutUint16(u[0:2], sport)
	binary.BigEndian.PutUint16(u[2:4], dport)
	binary.BigEndian.PutUint16(u[4:6], uint16(len(u)))
	sum := ^onesSum(u, udpPseudoSum(src, dst, len(u)))
	if sum == 0 {
		sum = 0xffff // zero means "no checksum" (RFC 768)
	}
	binary.BigEndian.PutUint16(u[6:8], sum)
}

// ipv6UDP builds an IPv6 packet (RFC 8200 section 3) of a UDP datagram
// from src:sport to dst:dport carrying payload, with a Hop Limit of
// sentTTL and the UDP checksum IPv6 requires.
func ipv6UDP(src, dst netip.Addr, sport, dport uint16, payload []byte) []byte {
	p := make([]byte, ipv6HeaderLen+udpHeaderLen+len(payload))
	p[0] = 0x60
	binary.BigEndian.PutUint16(p[4:6], uint16(udpHeaderLen+len(payload)))
	p[6], p[7] = protoUDP, sentTTL
	s, d := src.As16(), dst.As16()
	copy(p[8:24], s[:])
	copy(p[24:40], d[:])
	copy(p[ipv6HeaderLen+udpHeaderLen:], payload)
	putUDP(p[ipv6HeaderLen:], src, dst, sport, dport)
	return p
}

// ipv4UDP builds an IPv4 packet (RFC 791 section 3.1) of a UDP datagram
// from src:sport to dst:dport carrying payload, with a TTL of sentTTL
// and both checksums set.
func ipv4UDP(src, dst netip.Addr, sport, dport uint16, payload []byte) []byte {
	n := ipv4HeaderLen + udpHeaderLen + len(payload)
	p := make([]byte, n)
	p[0] = 0x45 // version 4, five 32-bit words of header
	binary.BigEndian.PutUint16(p[2:4], uint16(n))
	p[6] = 0x40 // don't fragment
	p[8], p[9] = sentTTL, protoUDP
	s, d := src.As4(), dst.As4()
	copy(p[12:16], s[:])
	copy(p[16:20], d[:])
	binary.BigEndian.PutUint16(p[10:12], ^onesSum(p[:ipv4HeaderLen], 0))
	copy(p[ipv4HeaderLen+udpHeaderLen:], payload)
	putUDP(p[ipv4HeaderLen:], src, dst, sport, dport)
	return p
}

// testUDP is the packet number i of a test flow: a payload of a size
// that cycles through small and near-MTU packets, from the seeded
// payload generator so that any byte changed on the way shows.
func testUDP(src, dst netip.Addr, i, maxSize int) []byte {
	sizes := []int{48, 100, 576, 1000, maxSize}
	size := min(sizes[i%len(sizes)], maxSize)
	if src.Is6() {
		return ipv6UDP(src, dst, 40000, 5000+uint16(i%7), testkit.Payload(size-ipv6HeaderLen-udpHeaderLen, uint64(i)))
	}
	return ipv4UDP(src, dst, 40000, 5000+uint16(i%7), testkit.Payload(size-ipv4HeaderLen-udpHeaderLen, uint64(i)))
}

// checkForwarded reports how got, which arrived through the tunnel,
// differs from sent other than by what one router hop may change: the
// TTL or Hop Limit one lower, and an IPv4 header checksum updated to
// match. The UDP checksum must still hold.
func checkForwarded(got, sent []byte) error {
	if len(got) != len(sent) {
		return fmt.Errorf("%d bytes arrived, %d were sent", len(got), len(sent))
	}
	hops, header := 8, ipv4HeaderLen
	if len(sent) > 0 && sent[0]>>4 == 6 {
		hops, header = 7, ipv6HeaderLen
	}
	if len(got) < header+udpHeaderLen {
		return fmt.Errorf("a %d-byte packet is too short", len(got))
	}
	if got[hops] != sent[hops]-1 {
		return fmt.Errorf("TTL or Hop Limit %d arrived, %d was sent: want one hop", got[hops], sent[hops])
	}
	var src, dst netip.Addr
	if header == ipv4HeaderLen {
		if onesSum(got[:ipv4HeaderLen], 0) != 0xffff {
			return fmt.Errorf("the IPv4 header checksum does not hold")
		}
		if !bytes.Equal(got[:8], sent[:8]) || got[9] != sent[9] || !bytes.Equal(got[12:], sent[12:]) {
			return fmt.Errorf("the packet changed on the way")
		}
		src, dst = netip.AddrFrom4([4]byte(got[12:16])), netip.AddrFrom4([4]byte(got[16:20]))
	} else {
		if !bytes.Equal(got[:7], sent[:7]) || !bytes.Equal(got[8:], sent[8:]) {
			return fmt.Errorf("the packet changed on the way")
		}
		src, dst = netip.AddrFrom16([16]byte(got[8:24])), netip.AddrFrom16([16]byte(got[24:40]))
	}
	u := got[header:]
	if onesSum(u, udpPseudoSum(src, dst, len(u))) != 0xffff {
		return fmt.Errorf("the UDP checksum does not hold")
	}
	return nil
}
