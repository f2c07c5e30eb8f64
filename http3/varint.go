package http3

import (
	"errors"
	"io"

	"github.com/satquic/satquic/internal/varint"
)

// maxVarint is the largest value a QUIC variable-length integer holds
// (RFC 9000 section 16).
const maxVarint = varint.Max

// varintLen is the encoded length of v: 1, 2, 4 or 8 bytes.
func varintLen(v uint64) int { return varint.Len(v) }

// appendVarint appends v in its shortest encoding; v must not exceed
// maxVarint.
func appendVarint(b []byte, v uint64) []byte { return varint.Append(b, v) }

// parseVarint decodes the varint at the start of b and returns it with its
// length; n is 0 if b is too short.
func parseVarint(b []byte) (v uint64, n int) { return varint.Parse(b) }

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
