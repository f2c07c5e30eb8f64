package wire

// ConnectionCloseFrame closes the connection (RFC 9000 section 19.19):
// type 0x1c for a transport error, 0x1d for an application error.
type ConnectionCloseFrame struct {
	// IsApplicationError selects type 0x1d, whose ErrorCode is the
	// application protocol's.
	IsApplicationError bool
	ErrorCode          uint64
	// TriggerType is the type of the frame that caused a transport error,
	// 0 when unknown. Application closes do not carry it.
	TriggerType  FrameType
	ReasonPhrase string
}

// ConnectionCloseFromError builds the transport CONNECTION_CLOSE frame
// that reports e.
func ConnectionCloseFromError(e *TransportError) *ConnectionCloseFrame {
	return &ConnectionCloseFrame{ErrorCode: e.Code, TriggerType: FrameType(e.FrameType), ReasonPhrase: e.Reason}
}

func (f *ConnectionCloseFrame) Type() FrameType {
	if f.IsApplicationError {
		return FrameTypeConnectionCloseApp
	}
	return FrameTypeConnectionClose
}

func (f *ConnectionCloseFrame) Len() int {
	n := 1 + VarintLen(f.ErrorCode) + VarintLen(uint64(len(f.ReasonPhrase))) + len(f.ReasonPhrase)
	if !f.IsApplicationError {
		n += VarintLen(uint64(f.TriggerType))
	}
	return n
}

func (f *ConnectionCloseFrame) Append(b []byte) ([]byte, error) {
	t := f.Type()
	if f.ErrorCode > MaxVarint || uint64(f.TriggerType) > MaxVarint {
		return b, frameError(t, CodeInternalError, "field above 2^62-1")
	}
	if f.IsApplicationError && f.TriggerType != 0 {
		return b, frameError(t, CodeInternalError, "application close cannot carry a frame type")
	}
	b = append(b, byte(t))
	b = appendVarint(b, f.ErrorCode)
	if !f.IsApplicationError {
		b = appendVarint(b, uint64(f.TriggerType))
	}
	b = appendVarint(b, uint64(len(f.ReasonPhrase)))
	return append(b, f.ReasonPhrase...), nil
}

func (f *ConnectionCloseFrame) decode(t FrameType, c *cursor) error {
	f.IsApplicationError = t == FrameTypeConnectionCloseApp
	f.ErrorCode = c.varint()
	f.TriggerType = 0
	if !f.IsApplicationError {
		f.TriggerType = FrameType(c.varint())
	}
	reason := c.bytes(c.varint())
	if c.short {
		return truncatedFrame(t)
	}
	// The reason is copied: it outlives the packet in error reports.
	f.ReasonPhrase = string(reason)
	return nil
}
