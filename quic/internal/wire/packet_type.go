package wire

import "fmt"

// PacketType names the kinds of QUIC packets (RFC 9000 section 17).
type PacketType uint8

const (
	PacketTypeInitial PacketType = iota + 1
	PacketType0RTT
	PacketTypeHandshake
	PacketTypeRetry
	PacketTypeVersionNegotiation
	PacketType1RTT
)

func (t PacketType) String() string {
	switch t {
	case PacketTypeInitial:
		return "Initial"
	case PacketType0RTT:
		return "0-RTT"
	case PacketTypeHandshake:
		return "Handshake"
	case PacketTypeRetry:
		return "Retry"
	case PacketTypeVersionNegotiation:
		return "VersionNegotiation"
	case PacketType1RTT:
		return "1-RTT"
	}
	return fmt.Sprintf("PacketType(%d)", uint8(t))
}

// hasPacketNumber reports whether packets of this type carry a packet
// number and protected payload.
func (t PacketType) hasPacketNumber() bool {
	return t == PacketTypeInitial || t == PacketType0RTT || t == PacketTypeHandshake || t == PacketType1RTT
}

// Long Packet Type bits: RFC 9000 table 5 for version 1; RFC 9369
// section 3.2 rotates them for version 2.
var (
	longTypesV1 = [4]PacketType{PacketTypeInitial, PacketType0RTT, PacketTypeHandshake, PacketTypeRetry}
	longTypesV2 = [4]PacketType{PacketTypeRetry, PacketTypeInitial, PacketType0RTT, PacketTypeHandshake}
)

func longTypeTable(v Version) (*[4]PacketType, error) {
	switch v {
	case Version1:
		return &longTypesV1, nil
	case Version2:
		return &longTypesV2, nil
	}
	return nil, fmt.Errorf("version %v: %w", v, ErrUnsupportedVersion)
}

// longPacketType maps the two Long Packet Type bits of version v to a
// packet type.
func longPacketType(v Version, bits uint8) (PacketType, error) {
	table, err := longTypeTable(v)
	if err != nil {
		return 0, err
	}
	return table[bits&3], nil
}

// longTypeBits maps a packet type to the Long Packet Type bits of
// version v.
func longTypeBits(v Version, t PacketType) (uint8, error) {
	table, err := longTypeTable(v)
	if err != nil {
		return 0, err
	}
	for bits, pt := range table {
		if pt == t {
			return uint8(bits), nil
		}
	}
	return 0, fmt.Errorf("packet type %v has no long header: %w", t, ErrInvalidHeader)
}
