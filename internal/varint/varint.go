// Package varint is the QUIC variable-length integer of RFC 9000 section
// 16, for the packages outside quic/ that speak it: HTTP/3 frames and
// capsules (http3), CONNECT-IP capsules (connectip) and the interop
// harness's capture reader. quic/internal/wire has its own, with the
// errors its frame parsers return.
package varint

// Max is the largest value a variable-length integer holds: 2^62 - 1.
const Max = 1<<62 - 1

// Len is the length of v's shortest encoding: 1, 2, 4 or 8 bytes.
func Len(v uint64) int {
	switch {
	case v < 1<<6:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<30:
		return 4
	default:
		return 8
	}
}

// Append appends v in its shortest encoding. v must not exceed Max; the
// callers rule that out.
func Append(b []byte, v uint64) []byte {
	switch Len(v) {
	case 1:
		return append(b, byte(v))
	case 2:
		return append(b, 0x40|byte(v>>8), byte(v))
	case 4:
		return append(b, 0x80|byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	default:
		return append(b, 0xc0|byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
			byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
}

// Parse decodes the integer at the start of b and returns it with the
// bytes it took; n is 0 if b ends before it does. The two high bits of
// the first byte give the length; a longer encoding than needed is
// accepted, as the RFC allows.
func Parse(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	n = 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v = uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n
}
