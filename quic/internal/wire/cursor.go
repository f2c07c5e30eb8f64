package wire

import "encoding/binary"

// cursor reads fields one after another from a byte slice. A read past the
// end sets short, and from then on every read returns a zero value; the
// parser checks short once it has read a group of fields, which keeps each
// parser a flat list of reads.
// Loops whose count comes from the input must check short on every turn,
// so that a huge count on a short input cannot spin.
type cursor struct {
	b     []byte
	pos   int
	short bool
}

func (c *cursor) remaining() int { return len(c.b) - c.pos }

func (c *cursor) varint() uint64 {
	if c.short || c.pos >= len(c.b) {
		c.short = true
		return 0
	}
	n := 1 << (c.b[c.pos] >> 6)
	if c.remaining() < n {
		c.short = true
		return 0
	}
	v := decodeVarint(c.b[c.pos:], n)
	c.pos += n
	return v
}

func (c *cursor) uint8() byte {
	if c.short || c.pos >= len(c.b) {
		c.short = true
		return 0
	}
	v := c.b[c.pos]
	c.pos++
	return v
}

func (c *cursor) uint16() uint16 {
	if c.short || c.remaining() < 2 {
		c.short = true
		return 0
	}
	v := binary.BigEndian.Uint16(c.b[c.pos:])
	c.pos += 2
	return v
}

func (c *cursor) uint32() uint32 {
	if c.short || c.remaining() < 4 {
		c.short = true
		return 0
	}
	v := binary.BigEndian.Uint32(c.b[c.pos:])
	c.pos += 4
	return v
}

// bytes returns the next n bytes, aliasing the input. n is a uint64
// because lengths come from varints that may exceed the input.
func (c *cursor) bytes(n uint64) []byte {
	if c.short || uint64(c.remaining()) < n {
		c.short = true
		return nil
	}
	v := c.b[c.pos : c.pos+int(n) : c.pos+int(n)]
	c.pos += int(n)
	return v
}

// rest returns everything left, aliasing the input.
func (c *cursor) rest() []byte {
	if c.short {
		return nil
	}
	v := c.b[c.pos:len(c.b):len(c.b)]
	c.pos = len(c.b)
	return v
}
