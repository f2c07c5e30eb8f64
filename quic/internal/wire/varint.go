package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxVarint is the largest value a QUIC variable-length integer can hold,
// 2^62-1 (RFC 9000 section 16).
const MaxVarint = 1<<62 - 1

// ErrTruncated reports input that ends before the structure being read.
var ErrTruncated = errors.New("quic wire: input truncated")

// ErrVarintRange reports a value above MaxVarint, or a value that does not
// fit the forced encoding length asked for.
var ErrVarintRange = errors.New("quic wire: value out of variable-length integer range")

// VarintLen returns the number of bytes of the minimal encoding of v: 1, 2,
// 4 or 8. It returns 0 for a value above MaxVarint, which has no encoding.
func VarintLen(v uint64) int {
	switch {
	case v <= 63:
		return 1
	case v <= 16383:
		return 2
	case v <= 1073741823:
		return 4
	case v <= MaxVarint:
		return 8
	}
	return 0
}

// varintMaxForLen is the largest value an n-byte encoding can hold.
func varintMaxForLen(n int) uint64 {
	switch n {
	case 1:
		return 63
	case 2:
		return 16383
	case 4:
		return 1073741823
	case 8:
		return MaxVarint
	}
	return 0
}

// AppendVarint appends the minimal encoding of v. It fails for v above
// MaxVarint.
func AppendVarint(b []byte, v uint64) ([]byte, error) {
	if v > MaxVarint {
		return b, fmt.Errorf("append varint %d: %w", v, ErrVarintRange)
	}
	return appendVarint(b, v), nil
}

// AppendVarintWithLen appends v encoded on exactly n bytes (1, 2, 4 or 8).
// A forced length lets a packet builder reserve room for a Length field and
// fill it in later with PutVarintWithLen; RFC 9000 section 16 allows any
// encoding length that holds the value, except for frame types.
func AppendVarintWithLen(b []byte, v uint64, n int) ([]byte, error) {
	if v > varintMaxForLen(n) {
		return b, fmt.Errorf("append varint %d on %d bytes: %w", v, n, ErrVarintRange)
	}
	return appendVarintLen(b, v, n), nil
}

// PutVarintWithLen overwrites dst[:n] with v encoded on exactly n bytes.
func PutVarintWithLen(dst []byte, v uint64, n int) error {
	if v > varintMaxForLen(n) {
		return fmt.Errorf("put varint %d on %d bytes: %w", v, n, ErrVarintRange)
	}
	if len(dst) < n {
		return fmt.Errorf("put varint on %d bytes into %d: %w", n, len(dst), ErrTruncated)
	}
	appendVarintLen(dst[:0], v, n)
	return nil
}

// ParseVarint reads one variable-length integer from the start of b and
// returns it with the number of bytes it took.
func ParseVarint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("parse varint: %w", ErrTruncated)
	}
	// The two most significant bits of the first byte give the length
	// as a power of two (RFC 9000 section 16, table 4).
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0, fmt.Errorf("parse varint of %d bytes from %d: %w", n, len(b), ErrTruncated)
	}
	return decodeVarint(b, n), n, nil
}

// decodeVarint decodes an n-byte varint from b; len(b) >= n.
func decodeVarint(b []byte, n int) uint64 {
	switch n {
	case 1:
		return uint64(b[0] & 0x3f)
	case 2:
		return uint64(binary.BigEndian.Uint16(b) & 0x3fff)
	case 4:
		return uint64(binary.BigEndian.Uint32(b) & 0x3fffffff)
	default:
		return binary.BigEndian.Uint64(b) & MaxVarint
	}
}

// appendVarint appends the minimal encoding of v; v <= MaxVarint.
func appendVarint(b []byte, v uint64) []byte {
	return appendVarintLen(b, v, VarintLen(v))
}

// appendVarintLen appends v on n bytes; the caller checked that v fits.
func appendVarintLen(b []byte, v uint64, n int) []byte {
	switch n {
	case 1:
		return append(b, byte(v))
	case 2:
		return binary.BigEndian.AppendUint16(b, uint16(v)|0x4000)
	case 4:
		return binary.BigEndian.AppendUint32(b, uint32(v)|0x80000000)
	default:
		return binary.BigEndian.AppendUint64(b, v|0xc000000000000000)
	}
}
