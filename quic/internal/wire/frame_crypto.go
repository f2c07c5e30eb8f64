package wire

// CryptoFrame carries TLS handshake bytes (RFC 9000 section 19.6). Data
// aliases the parsed packet payload.
type CryptoFrame struct {
	Offset uint64
	Data   []byte
}

func (f *CryptoFrame) Type() FrameType { return FrameTypeCrypto }

func (f *CryptoFrame) Len() int {
	return 1 + VarintLen(f.Offset) + VarintLen(uint64(len(f.Data))) + len(f.Data)
}

func (f *CryptoFrame) Append(b []byte) ([]byte, error) {
	if f.Offset > MaxVarint-uint64(len(f.Data)) {
		return b, frameError(FrameTypeCrypto, CodeInternalError, "crypto data ends beyond 2^62-1")
	}
	b = append(b, byte(FrameTypeCrypto))
	b = appendVarint(b, f.Offset)
	b = appendVarint(b, uint64(len(f.Data)))
	return append(b, f.Data...), nil
}

func (f *CryptoFrame) decode(t FrameType, c *cursor) error {
	f.Offset = c.varint()
	f.Data = c.bytes(c.varint())
	if c.short {
		return truncatedFrame(t)
	}
	f.Data = nilIfEmpty(f.Data)
	// RFC 9000 section 19.6: the stream may not extend beyond 2^62-1.
	if f.Offset > MaxVarint-uint64(len(f.Data)) {
		return frameError(t, CodeFrameEncodingError, "crypto data ends beyond 2^62-1")
	}
	return nil
}

// MaxCryptoDataLen returns how many bytes of handshake data a CRYPTO frame
// at offset can carry within budget bytes; ok is false when not even an
// empty frame fits.
func MaxCryptoDataLen(budget int, offset uint64) (n int, ok bool) {
	n, ok = maxDataLen(budget, 1+VarintLen(offset), true)
	if offset <= MaxVarint && uint64(n) > MaxVarint-offset {
		n = int(MaxVarint - offset)
	}
	return n, ok
}
