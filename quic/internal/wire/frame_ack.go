package wire

import (
	"math"
	"time"
)

// AckRange is a closed range of acknowledged packet numbers.
type AckRange struct {
	Smallest, Largest uint64
}

// ECNCounts are the ECN counters an ACK_ECN frame reports (RFC 9000
// section 19.3.2).
type ECNCounts struct {
	ECT0, ECT1, CE uint64
}

// AckFrame is an ACK or ACK_ECN frame (RFC 9000 section 19.3). Ranges are
// kept in descending order, as on the wire: Ranges[0].Largest is the
// Largest Acknowledged, and each range lies at least two packet numbers
// below the previous one (a gap of at least one unacknowledged packet).
// Parsing reuses the Ranges slice, so a reused AckFrame parses without
// allocating.
type AckFrame struct {
	Ranges []AckRange
	// AckDelay is the ACK Delay field as encoded: microseconds scaled
	// down by 2^ack_delay_exponent. See DecodeAckDelay.
	AckDelay uint64
	// HasECN selects the ACK_ECN type, which carries ECN.
	HasECN bool
	ECN    ECNCounts
}

func (f *AckFrame) Type() FrameType {
	if f.HasECN {
		return FrameTypeAckECN
	}
	return FrameTypeAck
}

// LargestAcked returns the Largest Acknowledged field, or
// InvalidPacketNumber for a frame without ranges.
func (f *AckFrame) LargestAcked() uint64 {
	if len(f.Ranges) == 0 {
		return InvalidPacketNumber
	}
	return f.Ranges[0].Largest
}

// AcksPacket reports whether pn lies in one of the frame's ranges.
func (f *AckFrame) AcksPacket(pn uint64) bool {
	// Binary search over the descending ranges for the first whose
	// Smallest is <= pn.
	lo, hi := 0, len(f.Ranges)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if f.Ranges[mid].Smallest > pn {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo < len(f.Ranges) && pn <= f.Ranges[lo].Largest
}

func (f *AckFrame) Len() int {
	if len(f.Ranges) == 0 {
		return 0
	}
	first := f.Ranges[0]
	n := 1 + VarintLen(first.Largest) + VarintLen(f.AckDelay) +
		VarintLen(uint64(len(f.Ranges)-1)) + VarintLen(first.Largest-first.Smallest)
	for i := 1; i < len(f.Ranges); i++ {
		n += f.rangeLen(i)
	}
	if f.HasECN {
		n += VarintLen(f.ECN.ECT0) + VarintLen(f.ECN.ECT1) + VarintLen(f.ECN.CE)
	}
	return n
}

// rangeLen is the encoded size of the Gap and ACK Range Length of range i.
func (f *AckFrame) rangeLen(i int) int {
	r := f.Ranges[i]
	gap := f.Ranges[i-1].Smallest - r.Largest - 2
	return VarintLen(gap) + VarintLen(r.Largest-r.Smallest)
}

// TruncateToLen drops the oldest ranges until the frame takes at most
// maxLen bytes, so that an ACK fits the room left in a packet. It reports
// false, leaving the frame unchanged, when even the first range does not
// fit.
func (f *AckFrame) TruncateToLen(maxLen int) bool {
	if len(f.Ranges) == 0 {
		return false
	}
	n := f.Len()
	for n > maxLen && len(f.Ranges) > 1 {
		last := len(f.Ranges) - 1
		n -= f.rangeLen(last)
		n -= VarintLen(uint64(last)) - VarintLen(uint64(last-1))
		f.Ranges = f.Ranges[:last]
	}
	return n <= maxLen
}

func (f *AckFrame) Append(b []byte) ([]byte, error) {
	if err := f.check(); err != nil {
		return b, err
	}
	first := f.Ranges[0]
	b = append(b, byte(f.Type()))
	b = appendVarint(b, first.Largest)
	b = appendVarint(b, f.AckDelay)
	b = appendVarint(b, uint64(len(f.Ranges)-1))
	b = appendVarint(b, first.Largest-first.Smallest)
	for i := 1; i < len(f.Ranges); i++ {
		r := f.Ranges[i]
		b = appendVarint(b, f.Ranges[i-1].Smallest-r.Largest-2)
		b = appendVarint(b, r.Largest-r.Smallest)
	}
	if f.HasECN {
		b = appendVarint(b, f.ECN.ECT0)
		b = appendVarint(b, f.ECN.ECT1)
		b = appendVarint(b, f.ECN.CE)
	}
	return b, nil
}

// check verifies that the ranges are ordered as the encoding requires.
func (f *AckFrame) check() error {
	t := f.Type()
	if len(f.Ranges) == 0 {
		return frameError(t, CodeInternalError, "ACK frame without ranges")
	}
	if f.Ranges[0].Largest > MaxPacketNumber || f.AckDelay > MaxVarint {
		return frameError(t, CodeInternalError, "ACK field above 2^62-1")
	}
	if f.HasECN && (f.ECN.ECT0 > MaxVarint || f.ECN.ECT1 > MaxVarint || f.ECN.CE > MaxVarint) {
		return frameError(t, CodeInternalError, "ECN count above 2^62-1")
	}
	for i, r := range f.Ranges {
		if r.Smallest > r.Largest {
			return frameError(t, CodeInternalError, "ACK range %d: smallest %d above largest %d", i, r.Smallest, r.Largest)
		}
		if i > 0 && r.Largest+2 > f.Ranges[i-1].Smallest {
			return frameError(t, CodeInternalError, "ACK range %d not below range %d by a gap", i, i-1)
		}
	}
	return nil
}

func (f *AckFrame) decode(t FrameType, c *cursor) error {
	largest := c.varint()
	f.AckDelay = c.varint()
	count := c.varint()
	firstLen := c.varint()
	if c.short {
		return truncatedFrame(t)
	}
	// RFC 9000 section 19.3.1: a range reaching below packet number 0 is
	// a FRAME_ENCODING_ERROR.
	if firstLen > largest {
		return frameError(t, CodeFrameEncodingError, "first ACK range %d below packet 0 from %d", firstLen, largest)
	}
	smallest := largest - firstLen
	f.Ranges = append(f.Ranges[:0], AckRange{Smallest: smallest, Largest: largest})
	for i := uint64(0); i < count; i++ {
		gap := c.varint()
		length := c.varint()
		if c.short {
			return truncatedFrame(t)
		}
		if gap+2 > smallest || length > smallest-gap-2 {
			return frameError(t, CodeFrameEncodingError, "ACK range %d reaches below packet 0", i+1)
		}
		next := smallest - gap - 2
		smallest = next - length
		f.Ranges = append(f.Ranges, AckRange{Smallest: smallest, Largest: next})
	}
	f.HasECN = t == FrameTypeAckECN
	f.ECN = ECNCounts{}
	if f.HasECN {
		f.ECN = ECNCounts{ECT0: c.varint(), ECT1: c.varint(), CE: c.varint()}
		if c.short {
			return truncatedFrame(t)
		}
	}
	return nil
}

// ParseAckFrame parses an ACK or ACK_ECN frame, appending its ranges to
// ranges[:0] so that passing the previous frame's Ranges avoids
// allocating.
func ParseAckFrame(b []byte, ranges []AckRange) (AckFrame, int, error) {
	f := AckFrame{Ranges: ranges}
	t, n, err := parseFrameType(b)
	if err != nil {
		return f, 0, err
	}
	if !t.IsAck() {
		return f, 0, frameError(t, CodeInternalError, "%v frame is not an ACK frame", t)
	}
	c := cursor{b: b, pos: n}
	if err := f.decode(t, &c); err != nil {
		return f, 0, err
	}
	return f, c.pos, nil
}

// DecodeAckDelay converts an ACK Delay field to a duration with the peer's
// ack_delay_exponent (RFC 9000 sections 18.2 and 19.3), saturating at the
// largest duration.
func DecodeAckDelay(field uint64, exponent uint8) time.Duration {
	if exponent > 62 || field > math.MaxInt64>>exponent/uint64(time.Microsecond) {
		return math.MaxInt64
	}
	return time.Duration(field<<exponent) * time.Microsecond
}

// EncodeAckDelay converts a delay to an ACK Delay field with the local
// ack_delay_exponent, rounding down and clamping negative delays to 0.
func EncodeAckDelay(d time.Duration, exponent uint8) uint64 {
	if d <= 0 || exponent > 62 {
		return 0
	}
	return min(uint64(d/time.Microsecond)>>exponent, MaxVarint)
}
