package wire

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// MaxConnectionIDLen is the longest connection ID QUIC version 1 and 2
// allow (RFC 9000 section 17.2).
const MaxConnectionIDLen = 20

// ErrConnectionIDLen reports a connection ID longer than 20 bytes, or an
// empty one where the RFC requires at least one byte.
var ErrConnectionIDLen = errors.New("quic wire: invalid connection ID length")

// ConnectionID is a QUIC connection ID of 0 to 20 bytes, held by value so
// that it costs no allocation and can be a map key. The zero value is the
// empty connection ID.
type ConnectionID struct {
	n uint8
	b [MaxConnectionIDLen]byte
}

// NewConnectionID copies b into a ConnectionID. It fails if b is longer
// than MaxConnectionIDLen.
func NewConnectionID(b []byte) (ConnectionID, error) {
	var c ConnectionID
	if len(b) > MaxConnectionIDLen {
		return c, fmt.Errorf("connection ID of %d bytes: %w", len(b), ErrConnectionIDLen)
	}
	c.n = uint8(len(b))
	copy(c.b[:], b)
	return c, nil
}

// Len returns the length of the connection ID in bytes.
func (c ConnectionID) Len() int { return int(c.n) }

// Bytes returns a copy of the connection ID's bytes.
func (c ConnectionID) Bytes() []byte { return append([]byte(nil), c.b[:c.n]...) }

// AppendTo appends the connection ID's bytes (without a length) to b.
func (c ConnectionID) AppendTo(b []byte) []byte { return append(b, c.b[:c.n]...) }

// String returns the connection ID in hexadecimal.
func (c ConnectionID) String() string { return hex.EncodeToString(c.b[:c.n]) }

// appendConnIDWithLen appends the one-byte length and the bytes of c, the
// layout of long headers and NEW_CONNECTION_ID frames.
func appendConnIDWithLen(b []byte, c ConnectionID) []byte {
	return append(append(b, c.n), c.b[:c.n]...)
}

// readConnectionID reads a length byte and that many bytes. It reports
// short input through the cursor and a length above 20 as an error.
func readConnectionID(c *cursor) (ConnectionID, error) {
	n := c.uint8()
	raw := c.bytes(uint64(n))
	if c.short {
		return ConnectionID{}, ErrTruncated
	}
	return NewConnectionID(raw)
}
