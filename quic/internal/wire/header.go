package wire

import (
	"errors"
	"fmt"
)

// ErrInvalidHeader reports a packet header that breaks RFC 9000 section
// 17: such a packet is discarded.
var ErrInvalidHeader = errors.New("quic wire: invalid packet header")

// Bits of the first byte of a packet (RFC 9000 sections 17.2 and 17.3.1).
const (
	headerFormBit    = 0x80 // 1: long header
	fixedBit         = 0x40 // must be 1 in versions 1 and 2
	longTypeShift    = 4    // Long Packet Type in bits 0x30
	longReservedBits = 0x0c // protected, must be 0 once unprotected
	shortSpinBit     = 0x20
	shortReserved    = 0x18 // protected, must be 0 once unprotected
	shortKeyPhaseBit = 0x04 // protected
	pnLenBits        = 0x03 // protected: packet number length - 1
)

// IsLongHeader reports whether a packet whose first byte is first has a
// long header (RFC 9000 section 17.2).
func IsLongHeader(first byte) bool { return first&headerFormBit != 0 }

// PeekPacketType classifies a packet from its first bytes without parsing
// it. For a long header it also returns the version; a version this
// package does not support gives ErrUnsupportedVersion together with that
// version, so that a server can answer with Version Negotiation.
func PeekPacketType(b []byte) (PacketType, Version, error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("peek packet type: %w", ErrTruncated)
	}
	if !IsLongHeader(b[0]) {
		return PacketType1RTT, 0, nil
	}
	c := cursor{b: b, pos: 1}
	v := Version(c.uint32())
	if c.short {
		return 0, 0, fmt.Errorf("peek long header version: %w", ErrTruncated)
	}
	if v == VersionNegotiationVersion {
		return PacketTypeVersionNegotiation, v, nil
	}
	t, err := longPacketType(v, b[0]>>longTypeShift)
	return t, v, err
}

// PacketNumberLenFromFirstByte returns the packet number length, 1 to 4,
// encoded in the two low bits of a first byte from which header
// protection has been removed (RFC 9000 sections 17.2 and 17.3.1).
func PacketNumberLenFromFirstByte(first byte) int { return int(first&pnLenBits) + 1 }

// HeaderProtectionMask returns the bits of the first byte that header
// protection covers: four bits in a long header, five in a short one
// (RFC 9001 section 5.4.1).
func HeaderProtectionMask(first byte) byte {
	if IsLongHeader(first) {
		return 0x0f
	}
	return 0x1f
}

// KeyPhase returns the Key Phase bit of an unprotected short-header first
// byte (RFC 9001 section 6).
func KeyPhase(first byte) bool { return first&shortKeyPhaseBit != 0 }

// CheckReservedBits checks the Reserved Bits of a first byte once header
// and packet protection are removed. Non-zero bits are a connection error
// of type PROTOCOL_VIOLATION (RFC 9000 sections 17.2 and 17.3.1); checking
// them before the packet is authenticated would let an attacker close the
// connection.
func CheckReservedBits(first byte) error {
	mask := byte(shortReserved)
	if IsLongHeader(first) {
		mask = longReservedBits
	}
	if first&mask != 0 {
		return &TransportError{Code: CodeProtocolViolation, Reason: fmt.Sprintf("reserved header bits set in first byte 0x%02x", first)}
	}
	return nil
}
