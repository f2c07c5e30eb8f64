package wire

// satquic's FEC extension (an experimental extension of QUIC, in the
// spirit of draft-michel-quic-fec): three frames and one transport
// parameter. They are not part of RFC 9000, so FrameParser does not know
// them: a connection that negotiated FEC parses them with ParseFECFrame,
// set as its FrameParser.Extension.
//
//   - FEC_SOURCE_ID names the packet that carries it a source symbol and
//     gives its symbol sequence number. It is the first frame of the
//     packet; the symbol is the rest of the payload.
//   - FEC_REPAIR carries one repair symbol of the RFC 8681 sliding-window
//     code: the Repair FEC Payload ID and the coded bytes, to the end of
//     the packet (it is the packet's last frame, like a DATAGRAM frame of
//     type 0x30), so that a repair the size of a full packet fits.
//   - FEC_RECOVERED tells the sender which source symbols the receiver
//     rebuilt, so that it never retransmits them. Like ACK, it is not
//     ack-eliciting and does not count in flight.
//
// The types fit in two-byte varints so that the per-packet identifier
// costs little.
const (
	FrameTypeFECSourceID  FrameType = 0x3fe0
	FrameTypeFECRepair    FrameType = 0x3fe1
	FrameTypeFECRecovered FrameType = 0x3fe2
)

// ParamFEC is the transport parameter that offers FEC: its value is the
// scheme (FECSchemeRLC) and the largest window, in source symbols, the
// sender of the parameter decodes. An endpoint sends repair symbols only
// to a peer that sent it.
const ParamFEC uint64 = 0x3fe0

// ParamFECPaddedSources, with an empty value, says that its sender takes
// PADDING frames before a packet's FEC_SOURCE_ID frame, outside the
// source symbol. A peer that sent it gets its full source packets padded
// to the size of a repair over them: a repair is then no larger than the
// source packets around it, and a sender's run of equal datagrams (one
// UDP GSO send, one GRO buffer at the receiver) goes on across it. An
// endpoint without it takes FEC_SOURCE_ID only as the first frame.
const ParamFECPaddedSources uint64 = 0x3fe2

// CheckFECPaddedSourcesParam checks ParamFECPaddedSources's value, which
// is empty; anything else is a TRANSPORT_PARAMETER_ERROR.
func CheckFECPaddedSourcesParam(value []byte) error {
	if len(value) != 0 {
		return transportParameterError("FEC padded-sources parameter with a %d-byte value", len(value))
	}
	return nil
}

// FECSchemeRLC is the sliding-window Random Linear Code over GF(2^8) of
// RFC 8681 with the Repair FEC Payload ID of its section 4.1.3.
const FECSchemeRLC uint64 = 1

// IsFEC reports whether t is one of the FEC extension's frame types.
func (t FrameType) IsFEC() bool {
	return t >= FrameTypeFECSourceID && t <= FrameTypeFECRecovered
}

func fecFrameName(t FrameType) string {
	switch t {
	case FrameTypeFECSourceID:
		return "FEC_SOURCE_ID"
	case FrameTypeFECRepair:
		return "FEC_REPAIR"
	case FrameTypeFECRecovered:
		return "FEC_RECOVERED"
	}
	return ""
}

// FECSourceIDFrame marks its packet as source symbol Seq.
type FECSourceIDFrame struct {
	Seq uint64
}

func (f *FECSourceIDFrame) Type() FrameType { return FrameTypeFECSourceID }

func (f *FECSourceIDFrame) Len() int { return 2 + VarintLen(f.Seq) }

func (f *FECSourceIDFrame) Append(b []byte) ([]byte, error) {
	if f.Seq > MaxVarint {
		return b, frameError(f.Type(), CodeInternalError, "sequence number %d too large", f.Seq)
	}
	b = appendVarint(b, uint64(f.Type()))
	return appendVarint(b, f.Seq), nil
}

func (f *FECSourceIDFrame) decode(t FrameType, c *cursor) error {
	f.Seq = c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	return nil
}

// FECRepairFrame carries one repair symbol: the 8-byte Repair FEC Payload
// ID and the coded symbol, opaque to this package, up to the end of the
// packet. Data aliases the parsed packet.
type FECRepairFrame struct {
	Data []byte
}

func (f *FECRepairFrame) Type() FrameType { return FrameTypeFECRepair }

func (f *FECRepairFrame) Len() int { return FECRepairOverhead + len(f.Data) }

func (f *FECRepairFrame) Append(b []byte) ([]byte, error) {
	b = appendVarint(b, uint64(f.Type()))
	return append(b, f.Data...), nil
}

func (f *FECRepairFrame) decode(t FrameType, c *cursor) error {
	f.Data = nilIfEmpty(c.rest())
	return nil
}

// FECRepairOverhead is the size of a FEC_REPAIR frame beyond its data: the
// frame type.
const FECRepairOverhead = 2

// FECRecoveredFrame lists rebuilt source symbols as ranges of sequence
// numbers, in descending order and separated by gaps, encoded like ACK
// ranges (RFC 9000 section 19.3.1). Parsing reuses the Ranges slice.
type FECRecoveredFrame struct {
	Ranges []AckRange
}

func (f *FECRecoveredFrame) Type() FrameType { return FrameTypeFECRecovered }

func (f *FECRecoveredFrame) Len() int {
	if len(f.Ranges) == 0 {
		return 0
	}
	first := f.Ranges[0]
	n := 2 + VarintLen(first.Largest) + VarintLen(uint64(len(f.Ranges)-1)) + VarintLen(first.Largest-first.Smallest)
	for i := 1; i < len(f.Ranges); i++ {
		gap := f.Ranges[i-1].Smallest - f.Ranges[i].Largest - 2
		n += VarintLen(gap) + VarintLen(f.Ranges[i].Largest-f.Ranges[i].Smallest)
	}
	return n
}

func (f *FECRecoveredFrame) Append(b []byte) ([]byte, error) {
	if err := checkDescendingRanges(f.Ranges); err != "" {
		return b, frameError(f.Type(), CodeInternalError, "%s", err)
	}
	first := f.Ranges[0]
	b = appendVarint(b, uint64(f.Type()))
	b = appendVarint(b, first.Largest)
	b = appendVarint(b, uint64(len(f.Ranges)-1))
	b = appendVarint(b, first.Largest-first.Smallest)
	for i := 1; i < len(f.Ranges); i++ {
		b = appendVarint(b, f.Ranges[i-1].Smallest-f.Ranges[i].Largest-2)
		b = appendVarint(b, f.Ranges[i].Largest-f.Ranges[i].Smallest)
	}
	return b, nil
}

// checkDescendingRanges returns why ranges cannot be encoded, or "".
func checkDescendingRanges(r []AckRange) string {
	if len(r) == 0 {
		return "no range"
	}
	for i, x := range r {
		if x.Smallest > x.Largest || x.Largest > MaxVarint {
			return "malformed range"
		}
		if i > 0 && r[i-1].Smallest < x.Largest+2 {
			return "ranges not descending with gaps"
		}
	}
	return ""
}

func (f *FECRecoveredFrame) decode(t FrameType, c *cursor) error {
	largest := c.varint()
	count := c.varint()
	firstLen := c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	if firstLen > largest {
		return frameError(t, CodeFrameEncodingError, "first range below zero")
	}
	// Each further range takes at least two bytes: a count above that is
	// malformed, and checking it first bounds the allocation.
	if count > uint64(c.remaining()/2) {
		return frameError(t, CodeFrameEncodingError, "%d ranges in %d bytes", count, c.remaining())
	}
	f.Ranges = append(f.Ranges[:0], AckRange{Smallest: largest - firstLen, Largest: largest})
	for range count {
		gap, length := c.varint(), c.varint()
		if c.short {
			return truncatedFrame(t)
		}
		prev := f.Ranges[len(f.Ranges)-1].Smallest
		if gap+2 > prev || length > prev-gap-2 {
			return frameError(t, CodeFrameEncodingError, "range below zero")
		}
		hi := prev - gap - 2
		f.Ranges = append(f.Ranges, AckRange{Smallest: hi - length, Largest: hi})
	}
	return nil
}

// FECFrameParser parses the FEC frames without allocating in steady
// state, like FrameParser; its Parse fits FrameParser.Extension.
type FECFrameParser struct {
	cur       cursor
	sourceID  FECSourceIDFrame
	repair    FECRepairFrame
	recovered FECRecoveredFrame
}

// Parse parses the FEC frame of type t at the start of b (type included).
// Other unknown types are a FRAME_ENCODING_ERROR.
func (p *FECFrameParser) Parse(t FrameType, b []byte) (Frame, int, error) {
	var f decodableFrame
	switch t {
	case FrameTypeFECSourceID:
		f = &p.sourceID
	case FrameTypeFECRepair:
		f = &p.repair
	case FrameTypeFECRecovered:
		f = &p.recovered
	default:
		return nil, 0, frameError(t, CodeFrameEncodingError, "unknown frame type 0x%x", uint64(t))
	}
	_, n, err := parseFrameType(b)
	if err != nil {
		return nil, 0, err
	}
	p.cur = cursor{b: b, pos: n}
	err = f.decode(t, &p.cur)
	n = p.cur.pos
	p.cur = cursor{}
	if err != nil {
		return nil, 0, err
	}
	return f, n, nil
}

// FECParams is the value of the FEC transport parameter.
type FECParams struct {
	Scheme    uint64
	MaxWindow uint64
}

// Append appends the parameter's value.
func (p FECParams) Append(b []byte) []byte {
	b = appendVarint(b, p.Scheme)
	return appendVarint(b, p.MaxWindow)
}

// ParseFECParams parses the FEC transport parameter's value. Malformed
// values are a TRANSPORT_PARAMETER_ERROR (RFC 9000 section 7.4).
func ParseFECParams(b []byte) (FECParams, error) {
	c := cursor{b: b}
	p := FECParams{Scheme: c.varint(), MaxWindow: c.varint()}
	if c.short || c.remaining() != 0 {
		return FECParams{}, transportParameterError("malformed FEC parameter")
	}
	if p.MaxWindow == 0 {
		return FECParams{}, transportParameterError("FEC window of 0 symbols")
	}
	return p, nil
}
