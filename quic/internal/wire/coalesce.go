package wire

import (
	"errors"
	"fmt"
)

// PacketLen returns the length of the first QUIC packet in a UDP datagram.
// Several packets may be coalesced in one datagram (RFC 9000 section
// 12.2): Initial, 0-RTT and Handshake packets end Length bytes after their
// packet number offset; a 1-RTT, Retry or Version Negotiation packet, or a
// long header of an unsupported version, extends to the end of the
// datagram.
func PacketLen(datagram []byte) (int, error) {
	t, _, err := PeekPacketType(datagram)
	if err != nil {
		// An unknown version cannot be split, so the rest of the
		// datagram is one packet.
		if errors.Is(err, ErrUnsupportedVersion) {
			return len(datagram), nil
		}
		return 0, fmt.Errorf("coalesced packet: %w", err)
	}
	if !t.hasPacketNumber() || t == PacketType1RTT {
		return len(datagram), nil
	}
	h, pnOffset, err := ParseLongHeader(datagram)
	if err != nil {
		return 0, fmt.Errorf("coalesced packet: %w", err)
	}
	return pnOffset + int(h.Length), nil
}
