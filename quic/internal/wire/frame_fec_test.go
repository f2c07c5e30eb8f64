package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func fecFrameCases() []Frame {
	return []Frame{
		&FECSourceIDFrame{Seq: 0},
		&FECSourceIDFrame{Seq: 1 << 40},
		&FECRepairFrame{Data: bytes.Repeat([]byte{7}, 300)},
		&FECRecoveredFrame{Ranges: []AckRange{{Smallest: 5, Largest: 5}}},
		&FECRecoveredFrame{Ranges: []AckRange{{Smallest: 90, Largest: 100}, {Smallest: 40, Largest: 50}, {Smallest: 0, Largest: 2}}},
	}
}

func parseFEC(b []byte) (Frame, int, error) {
	p := FrameParser{Extension: new(FECFrameParser).Parse}
	return p.Parse(b)
}

func TestFECFramesRoundTrip(t *testing.T) {
	for _, f := range fecFrameCases() {
		b, err := f.Append([]byte{0xaa})
		if err != nil {
			t.Fatalf("%v: %v", f.Type(), err)
		}
		if len(b)-1 != f.Len() {
			t.Errorf("%v: Len %d, wrote %d", f.Type(), f.Len(), len(b)-1)
		}
		got, n, err := parseFEC(b[1:])
		if err != nil || n != len(b)-1 {
			t.Fatalf("%v: parse n=%d err=%v", f.Type(), n, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Errorf("%v: got %+v, want %+v", f.Type(), got, f)
		}
		// Every strict prefix is a truncated frame, never a panic or a
		// shorter frame that consumed less; a repair runs to the end of
		// the packet, so its prefixes are shorter repairs.
		for i := range len(b) - 1 {
			got, n, err := parseFEC(b[1 : 1+i])
			if f.Type() == FrameTypeFECRepair && i >= 2 {
				if err != nil || n != i || len(got.(*FECRepairFrame).Data) != i-2 {
					t.Errorf("repair prefix of %d bytes: n=%d err=%v", i, n, err)
				}
				continue
			}
			if err == nil {
				t.Errorf("%v: prefix of %d bytes parsed", f.Type(), i)
			}
		}
	}
}

func TestFECFramesUnknownWithoutExtension(t *testing.T) {
	b, _ := (&FECSourceIDFrame{Seq: 3}).Append(nil)
	_, _, err := ParseFrame(b)
	var te *TransportError
	if !errors.As(err, &te) || te.Code != CodeFrameEncodingError {
		t.Fatalf("err = %v, want FRAME_ENCODING_ERROR", err)
	}
}

func TestFECFrameTypeProperties(t *testing.T) {
	if FrameTypeFECRecovered.IsAckEliciting() || FrameTypeFECRecovered.CountsInFlight() {
		t.Error("FEC_RECOVERED must behave like ACK")
	}
	if !FrameTypeFECRepair.IsAckEliciting() || !FrameTypeFECSourceID.CountsInFlight() {
		t.Error("repair and source frames are ack-eliciting and in flight")
	}
	if FrameTypeFECRepair.AllowedIn(PacketType0RTT) || !FrameTypeFECRepair.AllowedIn(PacketType1RTT) {
		t.Error("FEC frames belong in 1-RTT packets only")
	}
	if VarintLen(uint64(FrameTypeFECRecovered)) != 2 {
		t.Error("FEC frame types must fit two-byte varints")
	}
	if FrameTypeFECRepair.String() != "FEC_REPAIR" {
		t.Errorf("name %q", FrameTypeFECRepair.String())
	}
	if IsReservedTransportParameter(ParamFEC) {
		t.Error("FEC parameter ID is a GREASE value")
	}
}

// TestFECPaddedSourcesParam: the padded-sources parameter is empty, apart
// from the other extensions' IDs, and not a GREASE value.
func TestFECPaddedSourcesParam(t *testing.T) {
	if err := CheckFECPaddedSourcesParam(nil); err != nil {
		t.Errorf("empty value: %v", err)
	}
	err := CheckFECPaddedSourcesParam([]byte{1})
	var te *TransportError
	if !errors.As(err, &te) || te.Code != CodeTransportParameterError {
		t.Errorf("1-byte value: %v", err)
	}
	if IsReservedTransportParameter(ParamFECPaddedSources) || ParamFECPaddedSources == ParamFEC || ParamFECPaddedSources == ParamBDP {
		t.Error("padded-sources parameter ID is a GREASE value or another extension's")
	}
}

func TestFECRecoveredRejectsMalformed(t *testing.T) {
	bad := []*FECRecoveredFrame{
		{},
		{Ranges: []AckRange{{Smallest: 3, Largest: 2}}},
		{Ranges: []AckRange{{Smallest: 5, Largest: 9}, {Smallest: 3, Largest: 4}}}, // no gap
	}
	for _, f := range bad {
		if _, err := f.Append(nil); err == nil {
			t.Errorf("%+v encoded", f.Ranges)
		}
	}
	// A first range reaching below zero, and one more range than bytes.
	for _, b := range [][]byte{{0x7f, 0xe2, 0x02, 0x00, 0x05}, {0x7f, 0xe2, 0x08, 0x30, 0x00, 0x00}} {
		if _, _, err := parseFEC(b); err == nil {
			t.Errorf("%x parsed", b)
		}
	}
}

func TestFECParams(t *testing.T) {
	p := FECParams{Scheme: FECSchemeRLC, MaxWindow: 1000}
	got, err := ParseFECParams(p.Append(nil))
	if err != nil || got != p {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, b := range [][]byte{nil, {1}, {1, 0}, {1, 5, 0}} {
		if _, err := ParseFECParams(b); err == nil {
			t.Errorf("%x parsed", b)
		}
	}
}

func FuzzFECFrame(f *testing.F) {
	for _, fr := range fecFrameCases() {
		b, _ := fr.Append(nil)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := parseFEC(b)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("length %d of %d", n, len(b))
		}
		if !fr.Type().IsFEC() {
			return // an RFC 9000 frame, covered by FuzzFrame
		}
		enc, err := fr.Append(nil)
		if err != nil {
			t.Fatalf("re-encoding %v: %v", fr.Type(), err)
		}
		again, m, err := parseFEC(enc)
		if err != nil || m != len(enc) || !reflect.DeepEqual(again, fr) {
			t.Fatalf("round trip of %x: %+v (%v)", b[:n], again, err)
		}
		ParseFECParams(b)
	})
}
