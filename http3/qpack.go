package http3

import (
	"bytes"
	"errors"
	"sync"

	"golang.org/x/net/http2/hpack"
)

// QPACK (RFC 9204) with the static table only: this endpoint offers no
// dynamic table (SETTINGS_QPACK_MAX_TABLE_CAPACITY 0) and never uses the
// peer's, so a field section is its two-integer prefix and field lines
// that are indexed, literal with a static name, or literal with a
// literal name. Any reference to a dynamic table is an error (section
// 2.2: the decoder never offered one).

// headerField is one decoded or to-be-encoded field line.
type headerField struct {
	Name, Value string
}

// IsPseudo reports a pseudo-header field (RFC 9114 section 4.3).
func (f headerField) IsPseudo() bool { return len(f.Name) > 0 && f.Name[0] == ':' }

var (
	errQPACKTruncated   = errors.New("qpack: truncated field section")
	errQPACKOverflow    = errors.New("qpack: integer overflow")
	errQPACKDynamic     = errors.New("qpack: reference to a dynamic table")
	errQPACKStaticIndex = errors.New("qpack: static table index out of range")
)

// appendFieldSectionPrefix appends the prefix of a field section that
// refers to no dynamic table entry (RFC 9204 section 4.5.1): Required
// Insert Count 0 and Delta Base 0.
func appendFieldSectionPrefix(b []byte) []byte { return append(b, 0, 0) }

// appendFieldLine appends the shortest static-table form of one field
// line (RFC 9204 section 4.5): indexed when the static table holds the
// whole field, with a name reference when it holds the name, else with
// a literal name. Strings are Huffman-coded (RFC 7541 section 5.2).
func appendFieldLine(b []byte, name, value string) []byte {
	if ids := qpackStaticByName[name]; len(ids) > 0 {
		for _, i := range ids {
			if qpackStatic[i].Value == value {
				// Section 4.5.2: 1 T=1 index(6+).
				return appendPrefixInt(b, 0xc0, 6, uint64(i))
			}
		}
		// Section 4.5.4: 01 N=0 T=1 name index(4+), then the value.
		b = appendPrefixInt(b, 0x50, 4, uint64(ids[0]))
		return appendHuffmanString(b, 0x80, 7, value)
	}
	// Section 4.5.6: 001 N=0 H=1 name length(3+) name, then the value.
	b = appendHuffmanString(b, 0x28, 3, name)
	return appendHuffmanString(b, 0x80, 7, value)
}

// appendHuffmanString appends s Huffman-coded as a string literal whose
// length has an n-bit prefix in a first byte that starts with bits.
func appendHuffmanString(b []byte, bits byte, n uint8, s string) []byte {
	b = appendPrefixInt(b, bits, n, hpack.HuffmanEncodeLength(s))
	return hpack.AppendHuffmanString(b, s)
}

// appendPrefixInt appends v as an integer with an n-bit prefix (RFC 7541
// section 5.1, which RFC 9204 section 4.1.1 uses) in a first byte whose
// other bits are bits.
func appendPrefixInt(b []byte, bits byte, n uint8, v uint64) []byte {
	limit := uint64(1)<<n - 1
	if v < limit {
		return append(b, bits|byte(v))
	}
	b = append(b, bits|byte(limit))
	v -= limit
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// parsePrefixInt reads an integer with an n-bit prefix from p's first
// byte on, and returns the bytes after it.
func parsePrefixInt(p []byte, n uint8) (uint64, []byte, error) {
	if len(p) == 0 {
		return 0, nil, errQPACKTruncated
	}
	limit := uint64(1)<<n - 1
	v := uint64(p[0]) & limit
	p = p[1:]
	if v < limit {
		return v, p, nil
	}
	// Nine continuation bytes carry 63 bits, more than any length or
	// index this decoder could accept.
	for shift := uint(0); shift <= 56; shift += 7 {
		if len(p) == 0 {
			return 0, nil, errQPACKTruncated
		}
		c := p[0]
		p = p[1:]
		v += uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, p, nil
		}
	}
	return 0, nil, errQPACKOverflow
}

// A fieldDecoder decodes field sections. It keeps the strings it decoded
// last by their encoded form, so that the values a peer repeats in every
// request or response (the authority, a path, a content type) are
// neither Huffman-decoded nor allocated again; the cache is small and
// emptied when full, so a peer sending ever-new values costs it only a
// map insert per value.
type fieldDecoder struct {
	names, values map[string]string
	huff          bytes.Buffer
}

// Bounds of a fieldDecoder's cache: strings per map, and the longest
// encoded string kept.
const (
	maxInternedStrings = 64
	maxInternedLen     = 128
	maxPooledHuffman   = 16 << 10
)

var fieldDecoders = sync.Pool{New: func() any {
	return &fieldDecoder{names: map[string]string{}, values: map[string]string{}}
}}

// decodeFieldLines calls yield with each field line of the field section
// p, in order, until yield returns an error or the section ends.
func decodeFieldLines(p []byte, yield func(headerField) error) error {
	d := fieldDecoders.Get().(*fieldDecoder)
	defer d.release()
	// Section 4.5.1: a Required Insert Count other than 0 needs a
	// dynamic table; Delta Base means nothing without one.
	ric, rest, err := parsePrefixInt(p, 8)
	if err != nil {
		return err
	}
	if ric != 0 {
		return errQPACKDynamic
	}
	if _, rest, err = parsePrefixInt(rest, 7); err != nil {
		return err
	}
	for len(rest) > 0 {
		var f headerField
		if f, rest, err = d.fieldLine(rest); err != nil {
			return err
		}
		if err := yield(f); err != nil {
			return err
		}
	}
	return nil
}

// fieldLine decodes the field line at the start of p (RFC 9204 section
// 4.5) and returns the bytes after it.
func (d *fieldDecoder) fieldLine(p []byte) (headerField, []byte, error) {
	switch b := p[0]; {
	case b&0x80 != 0: // 1 T index(6+): indexed field line.
		if b&0x40 == 0 {
			return headerField{}, nil, errQPACKDynamic
		}
		i, rest, err := parsePrefixInt(p, 6)
		if err != nil {
			return headerField{}, nil, err
		}
		f, err := staticEntry(i)
		return f, rest, err
	case b&0x40 != 0: // 01 N T index(4+): literal with a name reference.
		if b&0x10 == 0 {
			return headerField{}, nil, errQPACKDynamic
		}
		i, rest, err := parsePrefixInt(p, 4)
		if err != nil {
			return headerField{}, nil, err
		}
		f, err := staticEntry(i)
		if err != nil {
			return headerField{}, nil, err
		}
		f.Value, rest, err = d.readString(rest, 7, d.values)
		return f, rest, err
	case b&0x20 != 0: // 001 N H length(3+): literal with a literal name.
		var f headerField
		name, rest, err := d.readString(p, 3, d.names)
		if err != nil {
			return headerField{}, nil, err
		}
		f.Name = name
		f.Value, rest, err = d.readString(rest, 7, d.values)
		return f, rest, err
	default: // 0001 and 0000: post-base references to a dynamic table.
		return headerField{}, nil, errQPACKDynamic
	}
}

// release returns d to the pool, without a Huffman buffer that a large
// string grew.
func (d *fieldDecoder) release() {
	if d.huff.Cap() > maxPooledHuffman {
		d.huff = bytes.Buffer{}
	}
	fieldDecoders.Put(d)
}

func staticEntry(i uint64) (headerField, error) {
	if i >= uint64(len(qpackStatic)) {
		return headerField{}, errQPACKStaticIndex
	}
	return qpackStatic[i], nil
}

// readString reads a string literal (RFC 7541 section 5.2) whose length
// has an n-bit prefix, the Huffman flag the bit above it, taking it from
// cache, by its encoded form, when it was decoded before.
func (d *fieldDecoder) readString(p []byte, n uint8, cache map[string]string) (string, []byte, error) {
	if len(p) == 0 {
		return "", nil, errQPACKTruncated
	}
	huffman := p[0]&(1<<n) != 0
	l, rest, err := parsePrefixInt(p, n)
	if err != nil {
		return "", nil, err
	}
	if l > uint64(len(rest)) {
		return "", nil, errQPACKTruncated
	}
	encoded := p[:len(p)-len(rest)+int(l)]
	body, rest := rest[:l], rest[l:]
	if s, ok := cache[string(encoded)]; ok {
		return s, rest, nil
	}
	var s string
	if huffman {
		d.huff.Reset()
		if _, err := hpack.HuffmanDecode(&d.huff, body); err != nil {
			return "", nil, err
		}
		s = d.huff.String()
	} else {
		s = string(body)
	}
	if len(encoded) <= maxInternedLen {
		if len(cache) >= maxInternedStrings {
			clear(cache)
		}
		cache[string(encoded)] = s
	}
	return s, rest, nil
}
