package wire

import "time"

// The ACK frequency extension (draft-ietf-quic-ack-frequency-14): a data
// sender asks its peer to acknowledge less (or more) often than RFC 9000
// section 13.2 has it. An endpoint that can receive the two frames sends
// the min_ack_delay transport parameter (section 3); its peer may then
// send ACK_FREQUENCY and IMMEDIATE_ACK frames, in 1-RTT packets only
// (min_ack_delay is never remembered across connections, so neither frame
// can go in 0-RTT, section 3). Both frames are ack-eliciting and count in
// flight (sections 4 and 5). The codepoints are the draft's provisional
// ones (section 11).
const (
	FrameTypeAckFrequency FrameType = 0xaf
	FrameTypeImmediateAck FrameType = 0x1f
	ParamMinAckDelay      uint64    = 0xff04de1b
)

// maxRequestedAckDelayUs: a Requested Max Ack Delay of 2^14 ms or more is
// invalid, as max_ack_delay is (draft section 4, RFC 9000 section 18.2).
const maxRequestedAckDelayUs = (1 << 14) * 1000

// IsAckFrequency reports whether t is ACK_FREQUENCY or IMMEDIATE_ACK.
func (t FrameType) IsAckFrequency() bool {
	return t == FrameTypeAckFrequency || t == FrameTypeImmediateAck
}

// ackFrequencyFrameName is the name of the extension's frame types, or ""
// for any other.
func ackFrequencyFrameName(t FrameType) string {
	switch t {
	case FrameTypeAckFrequency:
		return "ACK_FREQUENCY"
	case FrameTypeImmediateAck:
		return "IMMEDIATE_ACK"
	}
	return ""
}

// AckFrequencyFrame asks the peer to acknowledge after more than
// AckElicitingThreshold ack-eliciting packets, or RequestedMaxAckDelay
// after the first one, and at once when reordering reaches
// ReorderingThreshold (0: never for reordering alone). The receiver
// ignores a frame whose SequenceNumber is not above the largest it
// processed (draft section 4).
type AckFrequencyFrame struct {
	SequenceNumber        uint64
	AckElicitingThreshold uint64
	// RequestedMaxAckDelay is encoded in microseconds: a value that is not
	// a whole number of them cannot be encoded.
	RequestedMaxAckDelay time.Duration
	ReorderingThreshold  uint64
}

func (f *AckFrequencyFrame) Type() FrameType { return FrameTypeAckFrequency }

func (f *AckFrequencyFrame) Len() int {
	return VarintLen(uint64(FrameTypeAckFrequency)) + VarintLen(f.SequenceNumber) +
		VarintLen(f.AckElicitingThreshold) + VarintLen(uint64(f.RequestedMaxAckDelay/time.Microsecond)) +
		VarintLen(f.ReorderingThreshold)
}

// Append appends the frame. Fields above 2^62-1, and a delay that is
// negative, not a whole number of microseconds or of 2^14 ms or more,
// cannot be encoded.
func (f *AckFrequencyFrame) Append(b []byte) ([]byte, error) {
	d := f.RequestedMaxAckDelay
	if d < 0 || d%time.Microsecond != 0 || d/time.Microsecond >= maxRequestedAckDelayUs {
		return b, frameError(FrameTypeAckFrequency, CodeInternalError, "requested max ack delay %v not encodable", d)
	}
	if f.SequenceNumber > MaxVarint || f.AckElicitingThreshold > MaxVarint || f.ReorderingThreshold > MaxVarint {
		return b, frameError(FrameTypeAckFrequency, CodeInternalError, "ACK_FREQUENCY field above 2^62-1")
	}
	b = appendVarint(b, uint64(FrameTypeAckFrequency))
	b = appendVarint(b, f.SequenceNumber)
	b = appendVarint(b, f.AckElicitingThreshold)
	b = appendVarint(b, uint64(d/time.Microsecond))
	return appendVarint(b, f.ReorderingThreshold), nil
}

// decode reads the fields; a Requested Max Ack Delay of 2^14 ms or more is
// a PROTOCOL_VIOLATION (draft section 4). The check against the
// receiver's own min_ack_delay is the connection's.
func (f *AckFrequencyFrame) decode(t FrameType, c *cursor) error {
	f.SequenceNumber = c.varint()
	f.AckElicitingThreshold = c.varint()
	us := c.varint()
	f.ReorderingThreshold = c.varint()
	if c.short {
		f.RequestedMaxAckDelay = 0
		return truncatedFrame(t)
	}
	if us >= maxRequestedAckDelayUs {
		f.RequestedMaxAckDelay = 0
		return frameError(t, CodeProtocolViolation, "requested max ack delay of %d us, 2^14 ms or more", us)
	}
	f.RequestedMaxAckDelay = time.Duration(us) * time.Microsecond
	return nil
}

// ImmediateAckFrame asks the peer to acknowledge at once (draft section
// 5).
type ImmediateAckFrame struct{}

func (f *ImmediateAckFrame) Type() FrameType { return FrameTypeImmediateAck }
func (f *ImmediateAckFrame) Len() int        { return 1 }
func (f *ImmediateAckFrame) Append(b []byte) ([]byte, error) {
	return append(b, byte(FrameTypeImmediateAck)), nil
}
func (f *ImmediateAckFrame) decode(_ FrameType, _ *cursor) error { return nil }

// SetMinAckDelay offers the extension in p: min_ack_delay is d, in
// microseconds (draft section 3), which must not exceed p's
// max_ack_delay.
func (p *TransportParameters) SetMinAckDelay(d time.Duration) error {
	if d < 0 || d > p.MaxAckDelay() {
		return transportParameterError("min_ack_delay %v out of [0, max_ack_delay %v]", d, p.MaxAckDelay())
	}
	if p.Extensions == nil {
		p.Extensions = make(map[uint64][]byte)
	}
	p.Extensions[ParamMinAckDelay] = appendVarint(nil, uint64(d/time.Microsecond))
	return nil
}

// MinAckDelay returns the min_ack_delay of p, and whether p offers the
// extension. A value that is not one varint, or exceeds max_ack_delay, is
// a TRANSPORT_PARAMETER_ERROR (draft section 3; RFC 9000 section 7.4).
func (p *TransportParameters) MinAckDelay() (time.Duration, bool, error) {
	v, ok := p.Extensions[ParamMinAckDelay]
	if !ok {
		return 0, false, nil
	}
	us, n, err := ParseVarint(v)
	if err != nil || n != len(v) {
		return 0, false, transportParameterError("min_ack_delay of %d bytes is not one varint", len(v))
	}
	if us > p.MaxAckDelayMs*1000 {
		return 0, false, transportParameterError("min_ack_delay of %d us above max_ack_delay of %d ms", us, p.MaxAckDelayMs)
	}
	return time.Duration(us) * time.Microsecond, true, nil
}
