package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

func bdpFrameCases() []Frame {
	return []Frame{
		&BDPFrame{Blob: []byte{1}},
		&BDPFrame{Blob: bytes.Repeat([]byte{0xa5}, 81)},
		&BDPFrame{Blob: bytes.Repeat([]byte{3}, MaxBDPBlobLen)},
	}
}

func parseBDP(b []byte) (Frame, int, error) {
	p := FrameParser{Extension: new(BDPFrameParser).Parse}
	return p.Parse(b)
}

func TestBDPFrameRoundTrip(t *testing.T) {
	for _, f := range bdpFrameCases() {
		b, err := f.Append([]byte{0xaa})
		if err != nil {
			t.Fatal(err)
		}
		if len(b)-1 != f.Len() {
			t.Errorf("Len %d, wrote %d", f.Len(), len(b)-1)
		}
		got, n, err := parseBDP(append(b[1:], 0x01)) // a PING follows
		if err != nil || n != len(b)-1 {
			t.Fatalf("parse n=%d err=%v", n, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Errorf("got %+v, want %+v", got, f)
		}
	}
}

// TestBDPFrameTruncated: every strict prefix of a BDP frame is a
// FRAME_ENCODING_ERROR, never a panic or a shorter frame.
func TestBDPFrameTruncated(t *testing.T) {
	for _, f := range bdpFrameCases() {
		b, _ := f.Append(nil)
		for i := range len(b) {
			_, _, err := parseBDP(b[:i])
			var te *TransportError
			if !errors.As(err, &te) || te.Code != CodeFrameEncodingError {
				t.Errorf("prefix of %d bytes of %d: %v", i, len(b), err)
			}
		}
	}
}

func TestBDPFrameRejectsBadLengths(t *testing.T) {
	for _, n := range []int{0, MaxBDPBlobLen + 1} {
		f := &BDPFrame{Blob: make([]byte, n)}
		if _, err := f.Append(nil); err == nil {
			t.Errorf("blob of %d bytes encoded", n)
		}
		b := appendVarint(appendVarint(nil, uint64(FrameTypeBDP)), uint64(n))
		b = append(b, make([]byte, n)...)
		if _, _, err := parseBDP(b); err == nil {
			t.Errorf("blob of %d bytes parsed", n)
		}
	}
}

func TestBDPFrameUnknownWithoutExtension(t *testing.T) {
	b, _ := (&BDPFrame{Blob: []byte{1, 2}}).Append(nil)
	var te *TransportError
	if _, _, err := ParseFrame(b); !errors.As(err, &te) || te.Code != CodeFrameEncodingError {
		t.Fatalf("got %v, want FRAME_ENCODING_ERROR", err)
	}
	if _, _, err := new(BDPFrameParser).Parse(FrameTypeFECRepair, b); err == nil {
		t.Fatal("the BDP parser took another type")
	}
}

func TestBDPFrameTypeProperties(t *testing.T) {
	if !FrameTypeBDP.IsAckEliciting() || !FrameTypeBDP.CountsInFlight() {
		t.Error("BDP frames are ack-eliciting and count in flight")
	}
	for pt, want := range map[PacketType]bool{
		PacketType1RTT: true, PacketType0RTT: true, PacketTypeInitial: false, PacketTypeHandshake: false,
	} {
		if FrameTypeBDP.AllowedIn(pt) != want {
			t.Errorf("allowed in %v: %v", pt, !want)
		}
	}
	if FrameTypeBDP.String() != "BDP" || FrameTypeBDP.IsFEC() || FrameTypeBDP.IsKnown() {
		t.Errorf("type %v: FEC %v, known %v", FrameTypeBDP, FrameTypeBDP.IsFEC(), FrameTypeBDP.IsKnown())
	}
	if VarintLen(uint64(FrameTypeBDP)) != 2 || IsReservedTransportParameter(ParamBDP) || ParamBDP == ParamFEC {
		t.Error("BDP codepoints must be two-byte, not GREASE, and apart from FEC's")
	}
}

func TestBDPParam(t *testing.T) {
	if err := CheckBDPParam(nil); err != nil {
		t.Fatal(err)
	}
	var te *TransportError
	if err := CheckBDPParam([]byte{1}); !errors.As(err, &te) || te.Code != CodeTransportParameterError {
		t.Fatalf("got %v", err)
	}
	p := DefaultTransportParameters()
	p.InitialSourceConnectionID = ptr(mustConnID(t, []byte{1}))
	p.Extensions = map[uint64][]byte{ParamBDP: {}}
	raw, err := p.Append(nil, PerspectiveClient)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseTransportParameters(raw, PerspectiveClient)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got.Extensions[ParamBDP]; !ok || CheckBDPParam(v) != nil {
		t.Fatalf("parameter lost: %v", got.Extensions)
	}
}

func FuzzBDPFrame(f *testing.F) {
	for _, fr := range bdpFrameCases() {
		b, _ := fr.Append(nil)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := parseBDP(b)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("length %d of %d", n, len(b))
		}
		if fr.Type() != FrameTypeBDP {
			return // an RFC 9000 frame, covered by FuzzFrame
		}
		enc, err := fr.Append(nil)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		again, m, err := parseBDP(enc)
		if err != nil || m != len(enc) || !reflect.DeepEqual(again, fr) {
			t.Fatalf("round trip of %x: %+v (%v)", b[:n], again, err)
		}
		_ = CheckBDPParam(b)
	})
}
