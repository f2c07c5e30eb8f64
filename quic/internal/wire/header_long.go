package wire

import "fmt"

// RetryIntegrityTagLen is the length of the Retry Integrity Tag (RFC 9001
// section 5.8).
const RetryIntegrityTagLen = 16

// LongHeader is a long packet header (RFC 9000 section 17.2) of version 1
// or 2: Initial, 0-RTT, Handshake or Retry.
//
// ParseLongHeader fills the fields that header protection leaves in the
// clear; PacketNumber and PacketNumberLen stay zero because they are still
// protected. AppendLongHeader writes every field.
type LongHeader struct {
	Type      PacketType
	Version   Version
	DstConnID ConnectionID
	SrcConnID ConnectionID
	// Token is the Initial packet's token, or the Retry packet's retry
	// token. It aliases the parsed input.
	Token []byte
	// Length is the Length field of Initial, 0-RTT and Handshake packets:
	// the size of the packet number and the protected payload, AEAD tag
	// included (RFC 9000 section 17.2).
	Length uint64
	// LengthLen is the size of the Length field's encoding: as found when
	// parsing; when appending, 0 asks for the minimal size and 1, 2, 4 or
	// 8 forces one, so that a builder can reserve the field and fill it
	// in later with PutVarintWithLen.
	LengthLen int
	// PacketNumber is the full packet number; AppendLongHeader writes its
	// PacketNumberLen low-order bytes (RFC 9000 section 17.1).
	PacketNumber    uint64
	PacketNumberLen int
	// IntegrityTag is the Retry Integrity Tag of a parsed Retry packet.
	// AppendLongHeader does not write it: the caller computes it over
	// the appended packet (RFC 9001 section 5.8) and appends it.
	IntegrityTag [RetryIntegrityTagLen]byte
}

// ParseLongHeader parses the long header at the start of b, which holds the
// rest of the datagram. For Initial, 0-RTT and Handshake packets it returns
// the offset of the packet number, where header protection removal starts;
// the packet ends Length bytes after it. For Retry it returns len(b).
func ParseLongHeader(b []byte) (LongHeader, int, error) {
	var h LongHeader
	c := cursor{b: b}
	first := c.uint8()
	h.Version = Version(c.uint32())
	if c.short {
		return h, 0, fmt.Errorf("long header: %w", ErrTruncated)
	}
	if !IsLongHeader(first) {
		return h, 0, fmt.Errorf("first byte 0x%02x is not a long header: %w", first, ErrInvalidHeader)
	}
	if h.Version == VersionNegotiationVersion {
		return h, 0, fmt.Errorf("version negotiation packet has no typed long header: %w", ErrInvalidHeader)
	}
	var err error
	if h.Type, err = longPacketType(h.Version, first>>longTypeShift); err != nil {
		return h, 0, err
	}
	// RFC 9000 section 17.2: packets with a zero Fixed Bit are discarded.
	if first&fixedBit == 0 {
		return h, 0, fmt.Errorf("long header fixed bit is 0: %w", ErrInvalidHeader)
	}
	if err := parseLongConnIDs(&c, &h); err != nil {
		return h, 0, err
	}
	if h.Type == PacketTypeRetry {
		return parseRetryTail(&c, h)
	}
	return parseLongTail(&c, h)
}

func parseLongConnIDs(c *cursor, h *LongHeader) error {
	var err error
	if h.DstConnID, err = readConnectionID(c); err != nil {
		return fmt.Errorf("long header destination connection ID: %w", err)
	}
	if h.SrcConnID, err = readConnectionID(c); err != nil {
		return fmt.Errorf("long header source connection ID: %w", err)
	}
	return nil
}

// parseLongTail reads the token of an Initial packet and the Length field
// of Initial, 0-RTT and Handshake packets (RFC 9000 sections 17.2.2 to
// 17.2.4).
func parseLongTail(c *cursor, h LongHeader) (LongHeader, int, error) {
	if h.Type == PacketTypeInitial {
		h.Token = c.bytes(c.varint())
	}
	start := c.pos
	h.Length = c.varint()
	if c.short {
		return h, 0, fmt.Errorf("%v header: %w", h.Type, ErrTruncated)
	}
	h.LengthLen = c.pos - start
	if h.Length == 0 {
		return h, 0, fmt.Errorf("%v header Length 0 leaves no packet number: %w", h.Type, ErrInvalidHeader)
	}
	if h.Length > uint64(c.remaining()) {
		return h, 0, fmt.Errorf("%v header Length %d exceeds the %d bytes left: %w", h.Type, h.Length, c.remaining(), ErrTruncated)
	}
	if len(h.Token) == 0 {
		h.Token = nil
	}
	return h, c.pos, nil
}

// parseRetryTail reads the retry token and the integrity tag that fill the
// rest of a Retry packet (RFC 9000 section 17.2.5).
func parseRetryTail(c *cursor, h LongHeader) (LongHeader, int, error) {
	rest := c.rest()
	// A client discards a Retry packet with an empty token (RFC 9000
	// section 17.2.5.2), so such a packet is malformed here.
	if len(rest) <= RetryIntegrityTagLen {
		return h, 0, fmt.Errorf("retry packet with %d bytes after its connection IDs: %w", len(rest), ErrInvalidHeader)
	}
	tokenLen := len(rest) - RetryIntegrityTagLen
	h.Token = rest[:tokenLen:tokenLen]
	copy(h.IntegrityTag[:], rest[tokenLen:])
	return h, len(c.b), nil
}

// AppendLongHeader appends h up to and including the packet number; the
// caller appends the payload, protects the packet, and for a Retry packet
// appends the integrity tag instead. It fails, appending nothing, when a
// field cannot be encoded or does not belong to the packet type.
func AppendLongHeader(b []byte, h *LongHeader) ([]byte, error) {
	bits, err := longTypeBits(h.Version, h.Type)
	if err != nil {
		return b, fmt.Errorf("append long header: %w", err)
	}
	if err := h.checkTypeFields(); err != nil {
		return b, fmt.Errorf("append %v header: %w", h.Type, err)
	}
	first := byte(headerFormBit|fixedBit) | bits<<longTypeShift
	if h.Type != PacketTypeRetry {
		first |= byte(h.PacketNumberLen - 1)
	}
	b = append(b, first, byte(h.Version>>24), byte(h.Version>>16), byte(h.Version>>8), byte(h.Version))
	b = appendConnIDWithLen(b, h.DstConnID)
	b = appendConnIDWithLen(b, h.SrcConnID)
	switch h.Type {
	case PacketTypeRetry:
		return append(b, h.Token...), nil
	case PacketTypeInitial:
		b = appendVarint(b, uint64(len(h.Token)))
		b = append(b, h.Token...)
	}
	lengthLen := h.LengthLen
	if lengthLen == 0 {
		lengthLen = VarintLen(h.Length)
	}
	b = appendVarintLen(b, h.Length, lengthLen)
	return appendPacketNumberUnchecked(b, h.PacketNumber, h.PacketNumberLen), nil
}

// checkTypeFields checks that the fields of h suit its type and fit their
// encodings.
func (h *LongHeader) checkTypeFields() error {
	switch h.Type {
	case PacketTypeRetry:
		if len(h.Token) == 0 {
			return fmt.Errorf("empty retry token: %w", ErrInvalidHeader)
		}
		return nil
	case PacketType0RTT, PacketTypeHandshake:
		if len(h.Token) != 0 {
			return fmt.Errorf("token in a packet without a token field: %w", ErrInvalidHeader)
		}
	}
	if err := checkPacketNumber(h.PacketNumber, h.PacketNumberLen); err != nil {
		return err
	}
	if h.Length < uint64(h.PacketNumberLen) {
		return fmt.Errorf("length field %d shorter than the %d-byte packet number: %w", h.Length, h.PacketNumberLen, ErrInvalidHeader)
	}
	if h.LengthLen != 0 && h.Length > varintMaxForLen(h.LengthLen) || h.Length > MaxVarint {
		return fmt.Errorf("length field %d on %d bytes: %w", h.Length, h.LengthLen, ErrVarintRange)
	}
	return nil
}

// AppendRetryPseudoPacket appends the Retry Pseudo-Packet over which the
// Retry Integrity Tag is computed (RFC 9001 section 5.8): the original
// destination connection ID with its length, then the Retry packet
// without its tag.
func AppendRetryPseudoPacket(b []byte, origDstConnID ConnectionID, retryWithoutTag []byte) []byte {
	b = appendConnIDWithLen(b, origDstConnID)
	return append(b, retryWithoutTag...)
}
