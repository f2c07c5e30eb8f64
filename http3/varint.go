package http3

import (
	"errors"
	"io"
)

// maxVarint is the largest value a QUIC variable-length integer holds
// (RFC 9000 section 16).
const maxVarint = 1<<62 - 1

// varintLen is the encoded length of v: 1, 2, 4 or 8 bytes.
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

// appendVarint appends v in its shortest encoding; v must not exceed
// maxVarint.
func appendVarint(b []byte, v uint64) []byte {
	switch varintLen(v) {
	case 1:
		return append(b, byte(v))
	case 2:
		return append(b, byte(v>>8)|0x40, byte(v))
	case 4:
		return append(b, byte(v>>24)|0x80, byte(v>>16), byte(v>>8), byte(v))
	default:
		return append(b, byte(v>>56)|0xc0, byte(v>>48), byte(v>>40), byte(v>>32),
			byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
}

// parseVarint decodes the varint at the start of b and returns it with its
// length; n is 0 if b is too short.
func parseVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	n = 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v = uint64(b[0] & 0x3f)
	for i := 1; i < n; i++ {
		v = v<<8 | uint64(b[i])
	}
	return v, n
}

// errTruncated: a varint or frame ended early.
var errTruncated = errors.New("http3: truncated")

// readVarint reads one varint. It returns io.EOF if r ended before its
// first byte and errTruncated if r ended inside it; other errors of r
// are returned as they are.
func readVarint(r io.ByteReader) (uint64, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	n := 1 << (b >> 6)
	v := uint64(b & 0x3f)
	for i := 1; i < n; i++ {
		b, err = r.ReadByte()
		if err == io.EOF {
			return 0, errTruncated
		}
		if err != nil {
			return 0, err
		}
		v = v<<8 | uint64(b)
	}
	return v, nil
}
