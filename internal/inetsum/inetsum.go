// Package inetsum computes the Internet checksum of RFC 1071, which IPv4
// headers, ICMP, UDP and TCP carry: the ones' complement of the ones'
// complement sum of 16-bit big-endian words. One implementation serves
// the tunnel's offloads (tunnel), the ICMP errors and header checks of
// CONNECT-IP (connectip) and the emulator's capture headers (emulate).
package inetsum

import "encoding/binary"

// Sum adds b's 16-bit big-endian words to the unfolded accumulator acc,
// an odd final byte as if padded with zero, eight bytes at a time (RFC
// 1071 section 2(B): the sum may be taken in any word size and folded at
// the end). Each b is summed from an even offset: data split at an odd
// length must be summed whole.
func Sum(acc uint64, b []byte) uint64 {
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

// Fold reduces an accumulator to its 16-bit ones' complement sum.
func Fold(acc uint64) uint16 {
	for acc > 0xffff {
		acc = acc>>16 + acc&0xffff
	}
	return uint16(acc)
}

// Checksum is the checksum of b with acc added: the complement of the
// folded sum. It is 0 over data that includes a correct checksum.
func Checksum(acc uint64, b []byte) uint16 { return ^Fold(Sum(acc, b)) }
