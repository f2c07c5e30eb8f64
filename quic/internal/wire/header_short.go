package wire

import "fmt"

// ShortHeader is the header of a 1-RTT packet (RFC 9000 section 17.3.1).
// The Destination Connection ID carries no length on the wire: the
// receiver knows the length of the connection IDs it issued.
type ShortHeader struct {
	DstConnID ConnectionID
	// SpinBit is the latency spin bit (RFC 9000 section 17.4); it is not
	// protected.
	SpinBit bool
	// KeyPhase, PacketNumber and PacketNumberLen are written by
	// AppendShortHeader; ParseShortHeader leaves them zero because they
	// are protected.
	KeyPhase        bool
	PacketNumber    uint64
	PacketNumberLen int
}

// ParseShortHeader parses a short header whose destination connection ID
// is dstConnIDLen bytes long and returns the offset of the packet number.
// The packet extends to the end of the datagram.
func ParseShortHeader(b []byte, dstConnIDLen int) (ShortHeader, int, error) {
	var h ShortHeader
	if dstConnIDLen < 0 || dstConnIDLen > MaxConnectionIDLen {
		return h, 0, fmt.Errorf("short header with %d-byte connection ID: %w", dstConnIDLen, ErrConnectionIDLen)
	}
	// At least one packet number byte follows the connection ID.
	if len(b) < 2+dstConnIDLen {
		return h, 0, fmt.Errorf("short header: %w", ErrTruncated)
	}
	first := b[0]
	if IsLongHeader(first) {
		return h, 0, fmt.Errorf("first byte 0x%02x is not a short header: %w", first, ErrInvalidHeader)
	}
	// RFC 9000 section 17.3.1: packets with a zero Fixed Bit are discarded.
	if first&fixedBit == 0 {
		return h, 0, fmt.Errorf("short header fixed bit is 0: %w", ErrInvalidHeader)
	}
	h.SpinBit = first&shortSpinBit != 0
	h.DstConnID, _ = NewConnectionID(b[1 : 1+dstConnIDLen])
	return h, 1 + dstConnIDLen, nil
}

// AppendShortHeader appends h up to and including the packet number.
func AppendShortHeader(b []byte, h *ShortHeader) ([]byte, error) {
	if err := checkPacketNumber(h.PacketNumber, h.PacketNumberLen); err != nil {
		return b, fmt.Errorf("append short header: %w", err)
	}
	first := byte(fixedBit) | byte(h.PacketNumberLen-1)
	if h.SpinBit {
		first |= shortSpinBit
	}
	if h.KeyPhase {
		first |= shortKeyPhaseBit
	}
	b = append(b, first)
	b = h.DstConnID.AppendTo(b)
	return appendPacketNumberUnchecked(b, h.PacketNumber, h.PacketNumberLen), nil
}
