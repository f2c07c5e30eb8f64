package baseline

import (
	"encoding/binary"
	"fmt"
)

// Repair packet of the XOR baselines (XOR parity and Maelstrom): the XOR
// of the coded symbols of Count sources whose ESIs are First, First+Stride,
// ..., First+(Count-1)*Stride (mod 2^32), each padded to 2+MaxLen bytes.
//
//	offset  size      field
//	0       1         Tag, 0x58 ('X')
//	1       4         First ESI (big endian, like every field)
//	5       2         Stride
//	7       2         Count
//	9       2         MaxLen
//	11      2+MaxLen  XOR of the padded coded symbols
//
// Stride is the layer's interleave (1 for XOR parity), Count its window.
// The packet's length must be exactly 11+2+MaxLen, so a truncated repair
// is always detected.

const (
	xorRepairTag       = 0x58 // 'X'
	xorRepairHeaderLen = 11
)

// xorRepairHeader describes the sources an XOR repair covers.
type xorRepairHeader struct {
	First  uint32 // ESI of the first source covered
	Stride uint16 // ESI step between covered sources
	Count  uint16 // number of sources covered
	MaxLen uint16 // longest payload among them: the body is 2+MaxLen bytes
}

// esi returns the ESI of the j-th covered source.
func (h xorRepairHeader) esi(j int) uint32 {
	return h.First + uint32(j)*uint32(h.Stride)
}

// span is the number of ESIs from the first covered source to the last.
func (h xorRepairHeader) span() int {
	return (int(h.Count)-1)*int(h.Stride) + 1
}

// bodyLen is the size of the XOR body: one padded coded symbol.
func (h xorRepairHeader) bodyLen() int { return codedLengthSize + int(h.MaxLen) }

// put writes the header into b, which must hold xorRepairHeaderLen bytes.
func (h xorRepairHeader) put(b []byte) {
	b[0] = xorRepairTag
	binary.BigEndian.PutUint32(b[1:], h.First)
	binary.BigEndian.PutUint16(b[5:], h.Stride)
	binary.BigEndian.PutUint16(b[7:], h.Count)
	binary.BigEndian.PutUint16(b[9:], h.MaxLen)
}

// parseXORRepair splits an XOR repair packet into its header and body (a
// sub-slice of packet), checking every field.
func parseXORRepair(packet []byte) (xorRepairHeader, []byte, error) {
	if len(packet) < xorRepairHeaderLen {
		return xorRepairHeader{}, nil, fmt.Errorf("%w: xor repair of %d bytes is shorter than its %d-byte header", ErrMalformedRepair, len(packet), xorRepairHeaderLen)
	}
	if packet[0] != xorRepairTag {
		return xorRepairHeader{}, nil, fmt.Errorf("%w: tag %#02x is not an xor repair", ErrMalformedRepair, packet[0])
	}
	h := xorRepairHeader{
		First:  binary.BigEndian.Uint32(packet[1:]),
		Stride: binary.BigEndian.Uint16(packet[5:]),
		Count:  binary.BigEndian.Uint16(packet[7:]),
		MaxLen: binary.BigEndian.Uint16(packet[9:]),
	}
	switch {
	case h.Stride == 0:
		return xorRepairHeader{}, nil, fmt.Errorf("%w: xor repair with stride 0", ErrMalformedRepair)
	case h.Count == 0:
		return xorRepairHeader{}, nil, fmt.Errorf("%w: xor repair covering no source", ErrMalformedRepair)
	case h.MaxLen > maxProtectedPayload:
		return xorRepairHeader{}, nil, fmt.Errorf("%w: xor repair max length %d above %d", ErrMalformedRepair, h.MaxLen, maxProtectedPayload)
	}
	body := packet[xorRepairHeaderLen:]
	if len(body) != h.bodyLen() {
		return xorRepairHeader{}, nil, fmt.Errorf("%w: xor repair body of %d bytes, header says %d", ErrMalformedRepair, len(body), h.bodyLen())
	}
	return h, body, nil
}
