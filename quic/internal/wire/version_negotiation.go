package wire

import (
	"encoding/binary"
	"fmt"
)

// maxInvariantConnIDLen is the longest connection ID the version-independent
// long header can carry (RFC 8999 section 5.1).
const maxInvariantConnIDLen = 255

// InvariantLongHeader holds the version-independent fields of a long header
// (RFC 8999 section 5.1). Connection IDs may be up to 255 bytes in versions
// other than 1 and 2, which is why they are byte slices aliasing the input:
// a server answers an unknown version by echoing them in a Version
// Negotiation packet (RFC 9000 section 17.2).
type InvariantLongHeader struct {
	Version   Version
	DstConnID []byte
	SrcConnID []byte
}

// ParseInvariantLongHeader reads the version-independent fields of a long
// header and returns how many bytes they took.
func ParseInvariantLongHeader(b []byte) (InvariantLongHeader, int, error) {
	var h InvariantLongHeader
	c := cursor{b: b}
	first := c.uint8()
	h.Version = Version(c.uint32())
	h.DstConnID = c.bytes(uint64(c.uint8()))
	h.SrcConnID = c.bytes(uint64(c.uint8()))
	if c.short {
		return InvariantLongHeader{}, 0, fmt.Errorf("invariant long header: %w", ErrTruncated)
	}
	if !IsLongHeader(first) {
		return InvariantLongHeader{}, 0, fmt.Errorf("first byte 0x%02x is not a long header: %w", first, ErrInvalidHeader)
	}
	return h, c.pos, nil
}

// VersionNegotiation is a Version Negotiation packet (RFC 9000 section
// 17.2.1). Its connection IDs echo those of the packet that triggered it.
type VersionNegotiation struct {
	DstConnID []byte
	SrcConnID []byte
	Versions  []Version
}

// ParseVersionNegotiation parses a Version Negotiation packet, which fills
// the rest of the datagram.
func ParseVersionNegotiation(b []byte) (VersionNegotiation, error) {
	h, n, err := ParseInvariantLongHeader(b)
	if err != nil {
		return VersionNegotiation{}, fmt.Errorf("version negotiation: %w", err)
	}
	if h.Version != VersionNegotiationVersion {
		return VersionNegotiation{}, fmt.Errorf("version negotiation with version %v: %w", h.Version, ErrInvalidHeader)
	}
	list := b[n:]
	if len(list)%4 != 0 {
		return VersionNegotiation{}, fmt.Errorf("version negotiation list of %d bytes, not whole versions: %w", len(list), ErrInvalidHeader)
	}
	vn := VersionNegotiation{DstConnID: h.DstConnID, SrcConnID: h.SrcConnID}
	vn.Versions = make([]Version, 0, len(list)/4)
	for i := 0; i < len(list); i += 4 {
		vn.Versions = append(vn.Versions, Version(binary.BigEndian.Uint32(list[i:])))
	}
	return vn, nil
}

// AppendVersionNegotiation appends a Version Negotiation packet. unused
// supplies the seven arbitrary low bits of the first byte; the 0x40 bit is
// always set, as RFC 9000 section 17.2.1 recommends for demultiplexing.
func AppendVersionNegotiation(b []byte, vn *VersionNegotiation, unused byte) ([]byte, error) {
	if len(vn.DstConnID) > maxInvariantConnIDLen || len(vn.SrcConnID) > maxInvariantConnIDLen {
		return b, fmt.Errorf("version negotiation connection IDs of %d and %d bytes: %w", len(vn.DstConnID), len(vn.SrcConnID), ErrConnectionIDLen)
	}
	b = append(b, headerFormBit|fixedBit|unused&0x7f, 0, 0, 0, 0)
	b = append(append(b, byte(len(vn.DstConnID))), vn.DstConnID...)
	b = append(append(b, byte(len(vn.SrcConnID))), vn.SrcConnID...)
	for _, v := range vn.Versions {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	return b, nil
}
