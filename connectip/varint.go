package connectip

import (
	"errors"

	"github.com/satquic/satquic/internal/varint"
)

// maxVarint is the largest value a QUIC variable-length integer holds
// (RFC 9000 section 16): 2^62 - 1.
const maxVarint = varint.Max

var errVarintTruncated = errors.New("truncated variable-length integer")

// varintLen is the size of v's shortest encoding.
func varintLen(v uint64) int { return varint.Len(v) }

// appendVarint appends v in the shortest encoding of RFC 9000 section 16.
// Values above maxVarint are a programming error the callers rule out.
func appendVarint(b []byte, v uint64) []byte { return varint.Append(b, v) }

// parseVarint reads one variable-length integer from the start of b and
// returns it with the number of bytes it took (a non-minimal encoding is
// accepted, as the RFC allows).
func parseVarint(b []byte) (uint64, int, error) {
	v, n := varint.Parse(b)
	if n == 0 {
		return 0, 0, errVarintTruncated
	}
	return v, n, nil
}
