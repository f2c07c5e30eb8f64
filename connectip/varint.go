package connectip

import "errors"

// maxVarint is the largest value a QUIC variable-length integer holds
// (RFC 9000 section 16): 2^62 - 1.
const maxVarint = 1<<62 - 1

var errVarintTruncated = errors.New("truncated variable-length integer")

// varintLen is the size of v's shortest encoding.
func varintLen(v uint64) int {
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

// appendVarint appends v in the shortest encoding of RFC 9000 section 16.
// Values above maxVarint are a programming error the callers rule out.
func appendVarint(b []byte, v uint64) []byte {
	switch varintLen(v) {
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

// parseVarint reads one variable-length integer from the start of b and
// returns it with the number of bytes it took. The two high bits of the
// first byte give the length (RFC 9000 section 16); a non-minimal encoding
// is accepted, as the RFC allows.
func parseVarint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errVarintTruncated
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0, errVarintTruncated
	}
	v := uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n, nil
}
