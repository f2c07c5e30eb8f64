package wire

// Frame is a QUIC frame (RFC 9000 section 19, RFC 9221 section 4).
type Frame interface {
	// Type returns the frame type the frame is encoded with, flag bits
	// included.
	Type() FrameType
	// Len returns the number of bytes Append writes. For a frame whose
	// fields cannot be encoded it returns an estimate.
	Len() int
	// Append appends the frame's encoding. It fails, appending nothing,
	// when a field breaks the RFC's rules or cannot be encoded.
	Append(b []byte) ([]byte, error)
}

// decodableFrame is implemented by every frame of this package: decode
// reads the fields that follow the frame type t, overwriting all of them
// so that a frame value can be reused.
type decodableFrame interface {
	Frame
	decode(t FrameType, c *cursor) error
}

// ParseFrame parses the frame at the start of a decrypted packet payload
// and returns it with its length. Unknown frame types are a
// FRAME_ENCODING_ERROR (RFC 9000 section 12.4). ParseFrame allocates the
// frame it returns; a packet loop should use a FrameParser instead.
func ParseFrame(b []byte) (Frame, int, error) {
	return new(FrameParser).Parse(b)
}

// FrameParser parses frames without allocating in steady state: it keeps
// one frame value per type and returns a pointer to it, so a frame it
// returns is valid until the next Parse of a frame of the same type. ACK
// ranges reuse their slice. The zero FrameParser is ready to use.
type FrameParser struct {
	// Extension, if set, parses frame types this package does not know,
	// such as the FEC frames: it receives the frame type and the whole
	// frame, type included, and returns the frame and its length.
	Extension func(t FrameType, b []byte) (Frame, int, error)

	// cur lives in the parser because passing a local cursor to decode
	// through the interface would move it to the heap on every call.
	cur cursor

	padding            PaddingFrame
	ping               PingFrame
	ack                AckFrame
	resetStream        ResetStreamFrame
	stopSending        StopSendingFrame
	crypto             CryptoFrame
	newToken           NewTokenFrame
	stream             StreamFrame
	maxData            MaxDataFrame
	maxStreamData      MaxStreamDataFrame
	maxStreams         MaxStreamsFrame
	dataBlocked        DataBlockedFrame
	streamDataBlocked  StreamDataBlockedFrame
	streamsBlocked     StreamsBlockedFrame
	newConnectionID    NewConnectionIDFrame
	retireConnectionID RetireConnectionIDFrame
	pathChallenge      PathChallengeFrame
	pathResponse       PathResponseFrame
	connectionClose    ConnectionCloseFrame
	handshakeDone      HandshakeDoneFrame
	datagram           DatagramFrame
	ackFrequency       AckFrequencyFrame
	immediateAck       ImmediateAckFrame
}

// Parse parses the frame at the start of b and returns it with its length.
func (p *FrameParser) Parse(b []byte) (Frame, int, error) {
	t, n, err := parseFrameType(b)
	if err != nil {
		return nil, 0, err
	}
	f := p.slot(t)
	if f == nil {
		if p.Extension != nil {
			return p.Extension(t, b)
		}
		return nil, 0, frameError(t, CodeFrameEncodingError, "unknown frame type 0x%x", uint64(t))
	}
	p.cur = cursor{b: b, pos: n}
	err = f.decode(t, &p.cur)
	n = p.cur.pos
	p.cur = cursor{} // do not keep the packet alive
	if err != nil {
		return nil, 0, err
	}
	return f, n, nil
}

// slot returns the parser's frame value for type t, or nil if t is not a
// type of this package.
func (p *FrameParser) slot(t FrameType) decodableFrame {
	switch {
	case t.IsStream():
		return &p.stream
	case t.IsAck():
		return &p.ack
	case t.IsDatagram():
		return &p.datagram
	case t.IsConnectionClose():
		return &p.connectionClose
	}
	switch t {
	case FrameTypePadding:
		return &p.padding
	case FrameTypePing:
		return &p.ping
	case FrameTypeResetStream:
		return &p.resetStream
	case FrameTypeStopSending:
		return &p.stopSending
	case FrameTypeCrypto:
		return &p.crypto
	case FrameTypeNewToken:
		return &p.newToken
	case FrameTypeMaxData:
		return &p.maxData
	case FrameTypeMaxStreamData:
		return &p.maxStreamData
	case FrameTypeMaxStreamsBidi, FrameTypeMaxStreamsUni:
		return &p.maxStreams
	case FrameTypeDataBlocked:
		return &p.dataBlocked
	case FrameTypeStreamDataBlocked:
		return &p.streamDataBlocked
	case FrameTypeStreamsBlockedBidi, FrameTypeStreamsBlockedUni:
		return &p.streamsBlocked
	case FrameTypeNewConnectionID:
		return &p.newConnectionID
	case FrameTypeRetireConnectionID:
		return &p.retireConnectionID
	case FrameTypePathChallenge:
		return &p.pathChallenge
	case FrameTypePathResponse:
		return &p.pathResponse
	case FrameTypeHandshakeDone:
		return &p.handshakeDone
	case FrameTypeAckFrequency:
		return &p.ackFrequency
	case FrameTypeImmediateAck:
		return &p.immediateAck
	}
	return nil
}

// parseFrameType reads a frame type, which must use its shortest encoding
// (RFC 9000 section 12.4); a longer one is a PROTOCOL_VIOLATION.
func parseFrameType(b []byte) (FrameType, int, error) {
	v, n, err := ParseVarint(b)
	if err != nil {
		return 0, 0, &TransportError{Code: CodeFrameEncodingError, Reason: "frame type truncated"}
	}
	t := FrameType(v)
	if n != VarintLen(v) {
		return 0, 0, frameError(t, CodeProtocolViolation, "frame type 0x%x encoded on %d bytes", v, n)
	}
	return t, n, nil
}

// maxDataLen returns how many data bytes fit in budget after a header of
// header bytes, with a Length field of the smallest size that holds the
// count when withLen is set; ok is false if not even empty data fits.
func maxDataLen(budget, header int, withLen bool) (n int, ok bool) {
	avail := budget - header
	if avail < 0 {
		return 0, false
	}
	if !withLen {
		return avail, true
	}
	n = -1
	for _, size := range [...]int{1, 2, 4, 8} {
		if avail < size {
			break
		}
		n = max(n, int(min(uint64(avail-size), varintMaxForLen(size))))
	}
	return max(n, 0), n >= 0
}

// nilIfEmpty normalizes parsed empty byte fields, so that a parsed frame
// equals the frame it was appended from.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
