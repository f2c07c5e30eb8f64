package wire

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestAckFrequencyFrameTypeProperties(t *testing.T) {
	for _, ft := range []FrameType{FrameTypeAckFrequency, FrameTypeImmediateAck} {
		if !ft.IsAckEliciting() || !ft.CountsInFlight() || !ft.IsAckFrequency() || ft.IsKnown() {
			t.Errorf("%v: ack-eliciting, in flight and an extension", ft)
		}
		for _, pt := range []PacketType{PacketTypeInitial, PacketTypeHandshake, PacketType0RTT, PacketType1RTT} {
			if ft.AllowedIn(pt) != (pt == PacketType1RTT) {
				t.Errorf("%v allowed in %v: %v; only 1-RTT (draft section 3)", ft, pt, ft.AllowedIn(pt))
			}
		}
	}
	if FrameTypeAckFrequency.String() != "ACK_FREQUENCY" || FrameTypeImmediateAck.String() != "IMMEDIATE_ACK" {
		t.Errorf("names %v, %v", FrameTypeAckFrequency, FrameTypeImmediateAck)
	}
	if VarintLen(uint64(FrameTypeAckFrequency)) != 2 || VarintLen(uint64(FrameTypeImmediateAck)) != 1 {
		t.Error("0xaf takes two bytes, 0x1f one")
	}
	if b, _ := (&AckFrequencyFrame{RequestedMaxAckDelay: time.Millisecond}).Append(nil); !bytes.Equal(b[:2], []byte{0x40, 0xaf}) {
		t.Errorf("encoded type %x", b[:2])
	}
}

// TestAckFrequencyFrameEncoding checks a frame against its encoding by
// hand: type 0xaf, then four varints, the delay in microseconds.
func TestAckFrequencyFrameEncoding(t *testing.T) {
	f := &AckFrequencyFrame{SequenceNumber: 3, AckElicitingThreshold: 63, RequestedMaxAckDelay: 75 * time.Millisecond, ReorderingThreshold: 3}
	want := []byte{0x40, 0xaf, 0x03, 0x3f, 0x80, 0x01, 0x24, 0xf8, 0x03} // 75000 = 0x124f8
	got, err := f.Append(nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("encoding %x, %v; want %x", got, err, want)
	}
}

func TestAckFrequencyFrameRejects(t *testing.T) {
	for _, d := range []time.Duration{-time.Microsecond, time.Nanosecond, 1 << 14 * time.Millisecond} {
		f := &AckFrequencyFrame{RequestedMaxAckDelay: d}
		if b, err := f.Append([]byte{7}); err == nil || len(b) != 1 {
			t.Errorf("delay %v appended %x, %v", d, b, err)
		}
	}
	if _, err := (&AckFrequencyFrame{SequenceNumber: MaxVarint + 1}).Append(nil); err == nil {
		t.Error("sequence number above 2^62-1 appended")
	}
	// A delay of 2^14 ms or more is a PROTOCOL_VIOLATION (draft section 4).
	b := appendVarint(nil, uint64(FrameTypeAckFrequency))
	b = append(b, 1, 1)
	b = appendVarint(b, maxRequestedAckDelayUs)
	b = append(b, 1)
	var te *TransportError
	if _, _, err := ParseFrame(b); !errors.As(err, &te) || te.Code != CodeProtocolViolation {
		t.Fatalf("delay of 2^14 ms: %v", err)
	}
}

func TestMinAckDelayParam(t *testing.T) {
	p := DefaultTransportParameters()
	p.InitialSourceConnectionID = ptr(mustConnID(t, []byte{1}))
	if _, ok, err := p.MinAckDelay(); ok || err != nil {
		t.Fatalf("absent parameter: %v, %v", ok, err)
	}
	if err := p.SetMinAckDelay(1500 * time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if err := p.SetMinAckDelay(26 * time.Millisecond); err == nil {
		t.Error("min_ack_delay above max_ack_delay set")
	}
	raw, err := p.Append(nil, PerspectiveClient)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseTransportParameters(raw, PerspectiveClient)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok, err := got.MinAckDelay(); !ok || err != nil || d != 1500*time.Microsecond {
		t.Fatalf("round trip: %v, %v, %v", d, ok, err)
	}
	var te *TransportError
	for _, bad := range [][]byte{{}, {0x40}, {0x01, 0x02}, appendVarint(nil, 25001)} {
		got.Extensions[ParamMinAckDelay] = bad
		if _, _, err := got.MinAckDelay(); !errors.As(err, &te) || te.Code != CodeTransportParameterError {
			t.Errorf("value %x: %v", bad, err)
		}
	}
	got.Extensions[ParamMinAckDelay] = appendVarint(nil, 25000) // equal to max_ack_delay: valid
	if d, ok, err := got.MinAckDelay(); !ok || err != nil || d != 25*time.Millisecond {
		t.Errorf("min_ack_delay equal to max_ack_delay: %v, %v, %v", d, ok, err)
	}
	if IsReservedTransportParameter(ParamMinAckDelay) || IsKnownTransportParameter(ParamMinAckDelay) {
		t.Error("min_ack_delay is an extension parameter, not GREASE")
	}
}

// FuzzMinAckDelayParam: any value either parses to a delay within
// max_ack_delay that sets and reads back the same, or is an error.
func FuzzMinAckDelayParam(f *testing.F) {
	f.Add([]byte{0x43, 0xe8}, uint16(25))
	f.Add([]byte{}, uint16(0))
	f.Add([]byte{0xc0}, uint16(100))
	f.Fuzz(func(t *testing.T, v []byte, maxMs uint16) {
		p := DefaultTransportParameters()
		p.MaxAckDelayMs = uint64(maxMs % (MaxMaxAckDelayMs + 1))
		p.Extensions = map[uint64][]byte{ParamMinAckDelay: v}
		d, ok, err := p.MinAckDelay()
		if err != nil {
			return
		}
		if !ok || d < 0 || d > p.MaxAckDelay() {
			t.Fatalf("value %x: %v, %v", v, d, ok)
		}
		if err := p.SetMinAckDelay(d); err != nil {
			t.Fatal(err)
		}
		if d2, _, err := p.MinAckDelay(); err != nil || d2 != d {
			t.Fatalf("set %v, read %v, %v", d, d2, err)
		}
	})
}
