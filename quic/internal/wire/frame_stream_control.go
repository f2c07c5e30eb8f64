package wire

// ResetStreamFrame abruptly ends the sending part of a stream (RFC 9000
// section 19.4).
type ResetStreamFrame struct {
	StreamID  uint64
	ErrorCode uint64
	FinalSize uint64
}

func (f *ResetStreamFrame) Type() FrameType { return FrameTypeResetStream }
func (f *ResetStreamFrame) Len() int {
	return 1 + VarintLen(f.StreamID) + VarintLen(f.ErrorCode) + VarintLen(f.FinalSize)
}

func (f *ResetStreamFrame) Append(b []byte) ([]byte, error) {
	return appendVarintFrame(b, FrameTypeResetStream, f.StreamID, f.ErrorCode, f.FinalSize)
}

func (f *ResetStreamFrame) decode(t FrameType, c *cursor) error {
	f.StreamID, f.ErrorCode, f.FinalSize = c.varint(), c.varint(), c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	return nil
}

// StopSendingFrame asks the peer to stop sending on a stream (RFC 9000
// section 19.5).
type StopSendingFrame struct {
	StreamID  uint64
	ErrorCode uint64
}

func (f *StopSendingFrame) Type() FrameType { return FrameTypeStopSending }
func (f *StopSendingFrame) Len() int {
	return 1 + VarintLen(f.StreamID) + VarintLen(f.ErrorCode)
}

func (f *StopSendingFrame) Append(b []byte) ([]byte, error) {
	return appendVarintFrame(b, FrameTypeStopSending, f.StreamID, f.ErrorCode)
}

func (f *StopSendingFrame) decode(t FrameType, c *cursor) error {
	f.StreamID, f.ErrorCode = c.varint(), c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	return nil
}

// MaxStreamDataFrame raises a stream's flow control limit (RFC 9000
// section 19.10).
type MaxStreamDataFrame struct {
	StreamID uint64
	Maximum  uint64
}

func (f *MaxStreamDataFrame) Type() FrameType { return FrameTypeMaxStreamData }
func (f *MaxStreamDataFrame) Len() int {
	return 1 + VarintLen(f.StreamID) + VarintLen(f.Maximum)
}

func (f *MaxStreamDataFrame) Append(b []byte) ([]byte, error) {
	return appendVarintFrame(b, FrameTypeMaxStreamData, f.StreamID, f.Maximum)
}

func (f *MaxStreamDataFrame) decode(t FrameType, c *cursor) error {
	f.StreamID, f.Maximum = c.varint(), c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	return nil
}

// StreamDataBlockedFrame tells the peer a stream is blocked by its flow
// control limit (RFC 9000 section 19.13).
type StreamDataBlockedFrame struct {
	StreamID uint64
	Limit    uint64
}

func (f *StreamDataBlockedFrame) Type() FrameType { return FrameTypeStreamDataBlocked }
func (f *StreamDataBlockedFrame) Len() int {
	return 1 + VarintLen(f.StreamID) + VarintLen(f.Limit)
}

func (f *StreamDataBlockedFrame) Append(b []byte) ([]byte, error) {
	return appendVarintFrame(b, FrameTypeStreamDataBlocked, f.StreamID, f.Limit)
}

func (f *StreamDataBlockedFrame) decode(t FrameType, c *cursor) error {
	f.StreamID, f.Limit = c.varint(), c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	return nil
}

// appendVarintFrame appends a frame made of its type and varint fields,
// failing if a field exceeds 2^62-1.
func appendVarintFrame(b []byte, t FrameType, fields ...uint64) ([]byte, error) {
	for _, v := range fields {
		if v > MaxVarint {
			return b, frameError(t, CodeInternalError, "field %d above 2^62-1", v)
		}
	}
	b = append(b, byte(t))
	for _, v := range fields {
		b = appendVarint(b, v)
	}
	return b, nil
}
