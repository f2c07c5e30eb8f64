package wire

// StatelessResetTokenLen is the length of a stateless reset token (RFC
// 9000 section 10.3).
const StatelessResetTokenLen = 16

// StatelessResetToken is the token that authenticates a stateless reset.
type StatelessResetToken [StatelessResetTokenLen]byte

// NewConnectionIDFrame issues a connection ID to the peer (RFC 9000
// section 19.15).
type NewConnectionIDFrame struct {
	SequenceNumber      uint64
	RetirePriorTo       uint64
	ConnectionID        ConnectionID
	StatelessResetToken StatelessResetToken
}

func (f *NewConnectionIDFrame) Type() FrameType { return FrameTypeNewConnectionID }

func (f *NewConnectionIDFrame) Len() int {
	return 1 + VarintLen(f.SequenceNumber) + VarintLen(f.RetirePriorTo) + 1 +
		f.ConnectionID.Len() + StatelessResetTokenLen
}

func (f *NewConnectionIDFrame) Append(b []byte) ([]byte, error) {
	if err := f.check(CodeInternalError); err != nil {
		return b, err
	}
	b = append(b, byte(FrameTypeNewConnectionID))
	b = appendVarint(b, f.SequenceNumber)
	b = appendVarint(b, f.RetirePriorTo)
	b = appendConnIDWithLen(b, f.ConnectionID)
	return append(b, f.StatelessResetToken[:]...), nil
}

// check applies the rules of RFC 9000 section 19.15, reporting a
// violation with code.
func (f *NewConnectionIDFrame) check(code uint64) error {
	t := FrameTypeNewConnectionID
	if f.SequenceNumber > MaxVarint {
		return frameError(t, code, "sequence number %d above 2^62-1", f.SequenceNumber)
	}
	if f.RetirePriorTo > f.SequenceNumber {
		return frameError(t, code, "retire prior to %d above sequence number %d", f.RetirePriorTo, f.SequenceNumber)
	}
	if f.ConnectionID.Len() == 0 {
		return frameError(t, code, "empty connection ID")
	}
	return nil
}

func (f *NewConnectionIDFrame) decode(t FrameType, c *cursor) error {
	f.SequenceNumber = c.varint()
	f.RetirePriorTo = c.varint()
	idLen := c.uint8()
	id := c.bytes(uint64(idLen))
	token := c.bytes(StatelessResetTokenLen)
	if c.short {
		return truncatedFrame(t)
	}
	// RFC 9000 section 19.15: a length outside 1..20 is a
	// FRAME_ENCODING_ERROR.
	var err error
	if f.ConnectionID, err = NewConnectionID(id); err != nil {
		return frameError(t, CodeFrameEncodingError, "connection ID of %d bytes", idLen)
	}
	copy(f.StatelessResetToken[:], token)
	return f.check(CodeFrameEncodingError)
}

// RetireConnectionIDFrame retires a connection ID the peer issued (RFC
// 9000 section 19.16).
type RetireConnectionIDFrame struct {
	SequenceNumber uint64
}

func (f *RetireConnectionIDFrame) Type() FrameType { return FrameTypeRetireConnectionID }
func (f *RetireConnectionIDFrame) Len() int        { return 1 + VarintLen(f.SequenceNumber) }

func (f *RetireConnectionIDFrame) Append(b []byte) ([]byte, error) {
	return appendVarintFrame(b, FrameTypeRetireConnectionID, f.SequenceNumber)
}

func (f *RetireConnectionIDFrame) decode(t FrameType, c *cursor) error {
	f.SequenceNumber = c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	return nil
}
