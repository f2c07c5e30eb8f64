package wire

// maxStreamsLimit is the largest stream count a MAX_STREAMS or
// STREAMS_BLOCKED frame may carry: 2^60 streams of one type use every
// stream ID below 2^62 (RFC 9000 sections 19.11 and 19.14).
const maxStreamsLimit = 1 << 60

// MaxDataFrame raises the connection's flow control limit (RFC 9000
// section 19.9).
type MaxDataFrame struct {
	Maximum uint64
}

func (f *MaxDataFrame) Type() FrameType { return FrameTypeMaxData }
func (f *MaxDataFrame) Len() int        { return 1 + VarintLen(f.Maximum) }

func (f *MaxDataFrame) Append(b []byte) ([]byte, error) {
	return appendVarintFrame(b, FrameTypeMaxData, f.Maximum)
}

func (f *MaxDataFrame) decode(t FrameType, c *cursor) error {
	f.Maximum = c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	return nil
}

// DataBlockedFrame tells the peer the connection is blocked by its flow
// control limit (RFC 9000 section 19.12).
type DataBlockedFrame struct {
	Limit uint64
}

func (f *DataBlockedFrame) Type() FrameType { return FrameTypeDataBlocked }
func (f *DataBlockedFrame) Len() int        { return 1 + VarintLen(f.Limit) }

func (f *DataBlockedFrame) Append(b []byte) ([]byte, error) {
	return appendVarintFrame(b, FrameTypeDataBlocked, f.Limit)
}

func (f *DataBlockedFrame) decode(t FrameType, c *cursor) error {
	f.Limit = c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	return nil
}

// MaxStreamsFrame raises the number of streams of one type the peer may
// open (RFC 9000 section 19.11).
type MaxStreamsFrame struct {
	Unidirectional bool
	Maximum        uint64
}

func (f *MaxStreamsFrame) Type() FrameType {
	if f.Unidirectional {
		return FrameTypeMaxStreamsUni
	}
	return FrameTypeMaxStreamsBidi
}

func (f *MaxStreamsFrame) Len() int { return 1 + VarintLen(f.Maximum) }

func (f *MaxStreamsFrame) Append(b []byte) ([]byte, error) {
	if f.Maximum > maxStreamsLimit {
		return b, frameError(f.Type(), CodeInternalError, "maximum streams %d above 2^60", f.Maximum)
	}
	return appendVarintFrame(b, f.Type(), f.Maximum)
}

func (f *MaxStreamsFrame) decode(t FrameType, c *cursor) error {
	f.Unidirectional = t == FrameTypeMaxStreamsUni
	f.Maximum = c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	// RFC 9000 section 19.11: above 2^60 is a FRAME_ENCODING_ERROR.
	if f.Maximum > maxStreamsLimit {
		return frameError(t, CodeFrameEncodingError, "maximum streams %d above 2^60", f.Maximum)
	}
	return nil
}

// StreamsBlockedFrame tells the peer that its stream limit of one type
// keeps the sender from opening a stream (RFC 9000 section 19.14).
type StreamsBlockedFrame struct {
	Unidirectional bool
	Limit          uint64
}

func (f *StreamsBlockedFrame) Type() FrameType {
	if f.Unidirectional {
		return FrameTypeStreamsBlockedUni
	}
	return FrameTypeStreamsBlockedBidi
}

func (f *StreamsBlockedFrame) Len() int { return 1 + VarintLen(f.Limit) }

func (f *StreamsBlockedFrame) Append(b []byte) ([]byte, error) {
	if f.Limit > maxStreamsLimit {
		return b, frameError(f.Type(), CodeInternalError, "stream limit %d above 2^60", f.Limit)
	}
	return appendVarintFrame(b, f.Type(), f.Limit)
}

func (f *StreamsBlockedFrame) decode(t FrameType, c *cursor) error {
	f.Unidirectional = t == FrameTypeStreamsBlockedUni
	f.Limit = c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	// RFC 9000 section 19.14 allows STREAM_LIMIT_ERROR or
	// FRAME_ENCODING_ERROR for a limit above 2^60.
	if f.Limit > maxStreamsLimit {
		return frameError(t, CodeStreamLimitError, "stream limit %d above 2^60", f.Limit)
	}
	return nil
}
