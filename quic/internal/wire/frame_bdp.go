package wire

// satquic's BDP frame: the server hands the client its saved path state
// (the congestion window and RTT Careful Resume restarts from, RFC 9959),
// which the client returns on its next connection, in the spirit of
// draft-kuhn-quic-0rtt-bdp-11. The draft's BDP_FRAME (type 0xebd9)
// carries the lifetime, capacity, RTT and endpoint token as fields in the
// clear; satquic's frame carries one opaque blob that the server sealed,
// so that the client can neither read nor inflate the state, and a server
// farm needs no shared database. Because the format differs, it takes a
// codepoint of its own: reusing 0xebd9 would make a peer that implements
// the draft (picoquic does) misread it. Type and parameter sit next to
// the FEC extension's, in two-byte varints.
//
// The frame is only sent to a peer that sent ParamBDP, whose value is
// empty. The server sends it in 1-RTT packets; the client returns it in
// its first 0-RTT packet, or its first 1-RTT packet without 0-RTT. It is
// ack-eliciting and counts in flight, like any frame but ACK.
const (
	FrameTypeBDP FrameType = 0x3fe3
	ParamBDP     uint64    = 0x3fe1
)

// MaxBDPBlobLen bounds a BDP frame's blob, so that a client never keeps
// more than this for a server whatever the server sends. satquic's sealed
// state takes 81 bytes.
const MaxBDPBlobLen = 256

// BDPFrame carries a sealed path state, opaque to this package and to the
// client. Parsing aliases Blob to the packet.
type BDPFrame struct {
	Blob []byte
}

func (f *BDPFrame) Type() FrameType { return FrameTypeBDP }

func (f *BDPFrame) Len() int {
	return VarintLen(uint64(FrameTypeBDP)) + VarintLen(uint64(len(f.Blob))) + len(f.Blob)
}

// Append appends the frame: type, blob length, blob. An empty blob or one
// longer than MaxBDPBlobLen cannot be encoded.
func (f *BDPFrame) Append(b []byte) ([]byte, error) {
	if err := checkBDPBlobLen(uint64(len(f.Blob))); err != nil {
		return b, err
	}
	b = appendVarint(b, uint64(f.Type()))
	b = appendVarint(b, uint64(len(f.Blob)))
	return append(b, f.Blob...), nil
}

func (f *BDPFrame) decode(t FrameType, c *cursor) error {
	n := c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	if err := checkBDPBlobLen(n); err != nil {
		return err
	}
	f.Blob = c.bytes(n)
	if c.short {
		return truncatedFrame(t)
	}
	return nil
}

// checkBDPBlobLen is the FRAME_ENCODING_ERROR of a blob length out of
// range.
func checkBDPBlobLen(n uint64) error {
	if n == 0 || n > MaxBDPBlobLen {
		return frameError(FrameTypeBDP, CodeFrameEncodingError, "BDP blob of %d bytes, want 1 to %d", n, MaxBDPBlobLen)
	}
	return nil
}

// BDPFrameParser parses BDP frames without allocating, like FrameParser.
type BDPFrameParser struct {
	cur cursor
	bdp BDPFrame
}

// Parse parses the BDP frame at the start of b (type included); t must be
// FrameTypeBDP, any other type is a FRAME_ENCODING_ERROR.
func (p *BDPFrameParser) Parse(t FrameType, b []byte) (Frame, int, error) {
	if t != FrameTypeBDP {
		return nil, 0, frameError(t, CodeFrameEncodingError, "unknown frame type 0x%x", uint64(t))
	}
	_, n, err := parseFrameType(b)
	if err != nil {
		return nil, 0, err
	}
	p.cur = cursor{b: b, pos: n}
	err = p.bdp.decode(t, &p.cur)
	n = p.cur.pos
	p.cur = cursor{}
	if err != nil {
		return nil, 0, err
	}
	return &p.bdp, n, nil
}

// CheckBDPParam checks the value of ParamBDP, which must be empty; anything
// else is a TRANSPORT_PARAMETER_ERROR (RFC 9000 section 7.4).
func CheckBDPParam(value []byte) error {
	if len(value) != 0 {
		return transportParameterError("BDP parameter with a %d-byte value", len(value))
	}
	return nil
}
