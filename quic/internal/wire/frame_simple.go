package wire

// PaddingFrame is a run of PADDING frames (RFC 9000 section 19.1). Each
// PADDING frame is a single zero byte with no meaning of its own, so the
// parser folds consecutive ones into one value of Length bytes.
type PaddingFrame struct {
	Length int
}

func (f *PaddingFrame) Type() FrameType { return FrameTypePadding }
func (f *PaddingFrame) Len() int        { return f.Length }

func (f *PaddingFrame) Append(b []byte) ([]byte, error) {
	if f.Length < 1 {
		return b, frameError(FrameTypePadding, CodeInternalError, "padding of %d bytes", f.Length)
	}
	for range f.Length {
		b = append(b, 0)
	}
	return b, nil
}

func (f *PaddingFrame) decode(_ FrameType, c *cursor) error {
	start := c.pos - 1
	for c.pos < len(c.b) && c.b[c.pos] == 0 {
		c.pos++
	}
	f.Length = c.pos - start
	return nil
}

// PingFrame asks for an acknowledgment (RFC 9000 section 19.2).
type PingFrame struct{}

func (f *PingFrame) Type() FrameType                     { return FrameTypePing }
func (f *PingFrame) Len() int                            { return 1 }
func (f *PingFrame) Append(b []byte) ([]byte, error)     { return append(b, byte(FrameTypePing)), nil }
func (f *PingFrame) decode(_ FrameType, _ *cursor) error { return nil }

// HandshakeDoneFrame tells the client that the handshake is confirmed (RFC
// 9000 section 19.20).
type HandshakeDoneFrame struct{}

func (f *HandshakeDoneFrame) Type() FrameType { return FrameTypeHandshakeDone }
func (f *HandshakeDoneFrame) Len() int        { return 1 }
func (f *HandshakeDoneFrame) Append(b []byte) ([]byte, error) {
	return append(b, byte(FrameTypeHandshakeDone)), nil
}
func (f *HandshakeDoneFrame) decode(_ FrameType, _ *cursor) error { return nil }

// NewTokenFrame gives the client a token for the Initial packets of a
// future connection (RFC 9000 section 19.7). Token aliases the parsed
// input: copy it to keep it.
type NewTokenFrame struct {
	Token []byte
}

func (f *NewTokenFrame) Type() FrameType { return FrameTypeNewToken }
func (f *NewTokenFrame) Len() int {
	return 1 + VarintLen(uint64(len(f.Token))) + len(f.Token)
}

func (f *NewTokenFrame) Append(b []byte) ([]byte, error) {
	if len(f.Token) == 0 {
		return b, frameError(FrameTypeNewToken, CodeFrameEncodingError, "empty token")
	}
	b = append(b, byte(FrameTypeNewToken))
	b = appendVarint(b, uint64(len(f.Token)))
	return append(b, f.Token...), nil
}

func (f *NewTokenFrame) decode(t FrameType, c *cursor) error {
	f.Token = c.bytes(c.varint())
	if c.short {
		return truncatedFrame(t)
	}
	// RFC 9000 section 19.7: an empty token is a FRAME_ENCODING_ERROR.
	if len(f.Token) == 0 {
		f.Token = nil
		return frameError(t, CodeFrameEncodingError, "empty token")
	}
	return nil
}
