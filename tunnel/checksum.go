package tunnel

import "encoding/binary"

// The Internet checksum (RFC 1071): the ones' complement of the ones'
// complement sum of 16-bit big-endian words. sum16 adds b's words to an
// unfolded 64-bit accumulator, eight bytes at a time (RFC 1071 section
// 2(B): the sum may be taken in any word size and folded at the end).
func sum16(acc uint64, b []byte) uint64 {
	for len(b) >= 8 {
		w := binary.BigEndian.Uint64(b)
		acc += w >> 32
		acc += w & 0xffffffff
		b = b[8:]
	}
	for len(b) >= 2 {
		acc += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		acc += uint64(b[0]) << 8
	}
	return acc
}

// fold reduces an accumulator to a 16-bit ones' complement sum.
func fold(acc uint64) uint16 {
	for acc > 0xffff {
		acc = (acc >> 16) + (acc & 0xffff)
	}
	return uint16(acc)
}

// pseudoHeaderSum is the unfolded sum of the TCP/UDP pseudo-header: the
// addresses, the protocol and the upper-layer length (RFC 9293 section
// 3.1 for IPv4, RFC 8200 section 8.1 for IPv6).
func pseudoHeaderSum(src, dst []byte, proto uint8, length int) uint64 {
	acc := sum16(0, src)
	acc = sum16(acc, dst)
	return acc + uint64(proto) + uint64(length)
}

// ipv4HeaderChecksum sets the checksum of the IPv4 header h.
func ipv4HeaderChecksum(h []byte) {
	h[10], h[11] = 0, 0
	binary.BigEndian.PutUint16(h[10:], ^fold(sum16(0, h)))
}
