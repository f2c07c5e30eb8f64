package wire

// StreamFrame carries stream data (RFC 9000 section 19.8). Data aliases
// the parsed packet payload: nothing is copied.
type StreamFrame struct {
	StreamID uint64
	Offset   uint64
	Data     []byte
	Fin      bool
	// DataLenPresent writes the Length field. Without it the data runs to
	// the end of the packet, so only a packet's last frame may omit it.
	DataLenPresent bool
}

// Type returns the STREAM type with the OFF bit set for a non-zero offset
// and the LEN and FIN bits as the fields ask.
func (f *StreamFrame) Type() FrameType {
	t := FrameTypeStream
	if f.Offset != 0 {
		t |= streamFrameOffBit
	}
	if f.DataLenPresent {
		t |= streamFrameLenBit
	}
	if f.Fin {
		t |= streamFrameFinBit
	}
	return t
}

func (f *StreamFrame) Len() int {
	return streamHeaderLen(f.StreamID, f.Offset) + f.lenFieldLen() + len(f.Data)
}

func (f *StreamFrame) lenFieldLen() int {
	if f.DataLenPresent {
		return VarintLen(uint64(len(f.Data)))
	}
	return 0
}

// streamHeaderLen is the size of a STREAM frame's type, Stream ID and
// Offset fields.
func streamHeaderLen(streamID, offset uint64) int {
	n := 1 + VarintLen(streamID)
	if offset != 0 {
		n += VarintLen(offset)
	}
	return n
}

func (f *StreamFrame) Append(b []byte) ([]byte, error) {
	b, err := f.AppendHeader(b, len(f.Data))
	if err != nil {
		return b, err
	}
	return append(b, f.Data...), nil
}

// HeaderLen is the size of the frame's fields before its data, with n
// bytes of data.
func (f *StreamFrame) HeaderLen(n int) int {
	l := streamHeaderLen(f.StreamID, f.Offset)
	if f.DataLenPresent {
		l += VarintLen(uint64(n))
	}
	return l
}

// AppendHeader appends the frame's fields before its data, for n bytes of
// data that the caller appends itself right after (from buffers that are
// not contiguous, without gathering them first); f.Data is not used.
func (f *StreamFrame) AppendHeader(b []byte, n int) ([]byte, error) {
	if f.StreamID > MaxVarint {
		return b, frameError(f.Type(), CodeInternalError, "stream ID %d above 2^62-1", f.StreamID)
	}
	if n < 0 || f.Offset > MaxVarint-uint64(n) {
		return b, frameError(f.Type(), CodeInternalError, "stream data ends beyond 2^62-1")
	}
	t := f.Type()
	b = append(b, byte(t))
	b = appendVarint(b, f.StreamID)
	if t&streamFrameOffBit != 0 {
		b = appendVarint(b, f.Offset)
	}
	if f.DataLenPresent {
		b = appendVarint(b, uint64(n))
	}
	return b, nil
}

func (f *StreamFrame) decode(t FrameType, c *cursor) error {
	f.StreamID = c.varint()
	f.Offset = 0
	if t&streamFrameOffBit != 0 {
		f.Offset = c.varint()
	}
	f.DataLenPresent = t&streamFrameLenBit != 0
	if f.DataLenPresent {
		f.Data = c.bytes(c.varint())
	} else {
		f.Data = c.rest()
	}
	f.Fin = t&streamFrameFinBit != 0
	if c.short {
		return truncatedFrame(t)
	}
	f.Data = nilIfEmpty(f.Data)
	// RFC 9000 section 19.8: data may not end beyond 2^62-1.
	if f.Offset > MaxVarint-uint64(len(f.Data)) {
		return frameError(t, CodeFrameEncodingError, "stream data ends beyond 2^62-1")
	}
	return nil
}

// ParseStreamFrame parses a STREAM frame; its Data aliases b.
func ParseStreamFrame(b []byte) (StreamFrame, int, error) {
	var f StreamFrame
	t, n, err := parseFrameType(b)
	if err != nil {
		return f, 0, err
	}
	if !t.IsStream() {
		return f, 0, frameError(t, CodeInternalError, "%v frame is not a STREAM frame", t)
	}
	c := cursor{b: b, pos: n}
	if err := f.decode(t, &c); err != nil {
		return f, 0, err
	}
	return f, c.pos, nil
}

// MaxStreamDataLen returns how many bytes of data a STREAM frame for
// streamID at offset can carry within budget bytes, with a Length field
// when withLen is set; ok is false when not even an empty frame fits. It
// is the packetizer's question "how much of this stream fits here".
func MaxStreamDataLen(budget int, streamID, offset uint64, withLen bool) (n int, ok bool) {
	n, ok = maxDataLen(budget, streamHeaderLen(streamID, offset), withLen)
	if offset <= MaxVarint && uint64(n) > MaxVarint-offset {
		n = int(MaxVarint - offset)
	}
	return n, ok
}
