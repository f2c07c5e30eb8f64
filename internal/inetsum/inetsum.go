// Package inetsum computes the Internet checksum of RFC 1071, which IPv4
// headers, ICMP, UDP and TCP carry: the ones' complement of the ones'
// complement sum of 16-bit big-endian words. One implementation serves
// the tunnel's offloads (tunnel), the ICMP errors and header checks of
// CONNECT-IP (connectip) and the emulator's capture headers (emulate).
package inetsum

import (
	"encoding/binary"
	"math/bits"
)

// Sum adds b's 16-bit big-endian words to the unfolded accumulator acc,
// an odd final byte as if padded with zero. Each b is summed from an even
// offset: data split at an odd length must be summed whole.
//
// The bulk is summed as little-endian 64-bit words with the carry of each
// addition fed into the next (RFC 1071 section 2(B): the sum may be taken
// in any word size, and section 2(C): in either byte order, the result
// swapped at the end), 32 bytes a loop: a tunnel sums every byte it
// carries twice, and the eight-byte big-endian loop this replaced was a
// twentieth of a tunnel end's CPU.
func Sum(acc uint64, b []byte) uint64 {
	var s, carry uint64
	for len(b) >= 32 {
		s, carry = bits.Add64(s, binary.LittleEndian.Uint64(b), carry)
		s, carry = bits.Add64(s, binary.LittleEndian.Uint64(b[8:]), carry)
		s, carry = bits.Add64(s, binary.LittleEndian.Uint64(b[16:]), carry)
		s, carry = bits.Add64(s, binary.LittleEndian.Uint64(b[24:]), carry)
		b = b[32:]
	}
	for len(b) >= 8 {
		s, carry = bits.Add64(s, binary.LittleEndian.Uint64(b), carry)
		b = b[8:]
	}
	// The end-around carry: adding it back cannot carry again, since s
	// is then at most 2^64-2.
	s, carry = bits.Add64(s, 0, carry)
	s += carry
	acc += uint64(bits.ReverseBytes16(foldLittleEndian(s)))
	for len(b) >= 2 {
		acc += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		acc += uint64(b[0]) << 8
	}
	return acc
}

// foldLittleEndian reduces a 64-bit ones' complement sum of little-endian
// words to the 16-bit one, in little-endian order.
func foldLittleEndian(s uint64) uint16 {
	s = s>>32 + s&0xffffffff
	s = s>>32 + s&0xffffffff
	s = s>>16 + s&0xffff
	s = s>>16 + s&0xffff
	return uint16(s)
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
