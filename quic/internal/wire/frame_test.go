package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"
)

// frameCases returns frames of every type with edge values.
func frameCases(t testing.TB) []Frame {
	cid20 := mustConnID(t, bytes.Repeat([]byte{0x5a}, 20))
	token := StatelessResetToken{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	return []Frame{
		&PaddingFrame{Length: 1},
		&PaddingFrame{Length: 37},
		&PingFrame{},
		&AckFrame{Ranges: []AckRange{{Smallest: 0, Largest: 0}}},
		&AckFrame{Ranges: []AckRange{{Smallest: 90, Largest: MaxPacketNumber}, {Smallest: 50, Largest: 88}, {Smallest: 0, Largest: 0}}, AckDelay: MaxVarint},
		&AckFrame{Ranges: []AckRange{{Smallest: 5, Largest: 10}, {Smallest: 2, Largest: 3}}, AckDelay: 1000, HasECN: true, ECN: ECNCounts{ECT0: 1, ECT1: MaxVarint, CE: 0}},
		&ResetStreamFrame{StreamID: MaxVarint, ErrorCode: 0, FinalSize: MaxVarint},
		&StopSendingFrame{StreamID: 4, ErrorCode: MaxVarint},
		&CryptoFrame{Offset: 0, Data: []byte("client hello")},
		&CryptoFrame{Offset: MaxVarint - 3, Data: []byte{1, 2, 3}},
		&CryptoFrame{Offset: 77},
		&NewTokenFrame{Token: []byte{0xff}},
		&StreamFrame{StreamID: 0, Data: []byte("x")},
		&StreamFrame{StreamID: 0, Offset: 0, Fin: true, DataLenPresent: true},
		&StreamFrame{StreamID: MaxVarint, Offset: MaxVarint - 5, Data: []byte("hello"), Fin: true, DataLenPresent: true},
		&StreamFrame{StreamID: 8, Offset: 1 << 20, Data: bytes.Repeat([]byte{7}, 300), DataLenPresent: false},
		&MaxDataFrame{Maximum: MaxVarint},
		&MaxStreamDataFrame{StreamID: 3, Maximum: 0},
		&MaxStreamsFrame{Maximum: MaxStreamsLimit},
		&MaxStreamsFrame{Unidirectional: true, Maximum: 0},
		&DataBlockedFrame{Limit: 16384},
		&StreamDataBlockedFrame{StreamID: 1, Limit: 63},
		&StreamsBlockedFrame{Limit: MaxStreamsLimit},
		&StreamsBlockedFrame{Unidirectional: true, Limit: 64},
		&NewConnectionIDFrame{SequenceNumber: 7, RetirePriorTo: 7, ConnectionID: cid20, StatelessResetToken: token},
		&NewConnectionIDFrame{SequenceNumber: MaxVarint, ConnectionID: mustConnID(t, []byte{1})},
		&RetireConnectionIDFrame{SequenceNumber: MaxVarint},
		&PathChallengeFrame{Data: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
		&PathResponseFrame{Data: [8]byte{8, 7, 6, 5, 4, 3, 2, 1}},
		&ConnectionCloseFrame{ErrorCode: CodeFrameEncodingError, TriggerType: FrameTypeStream | 3, ReasonPhrase: "bad frame"},
		&ConnectionCloseFrame{ErrorCode: CryptoErrorCode(42)},
		&ConnectionCloseFrame{IsApplicationError: true, ErrorCode: MaxVarint, ReasonPhrase: "bye"},
		&HandshakeDoneFrame{},
		&DatagramFrame{Data: []byte("datagram")},
		&DatagramFrame{Data: []byte("with length"), DataLenPresent: true},
		&DatagramFrame{DataLenPresent: true},
		&AckFrequencyFrame{SequenceNumber: 0, AckElicitingThreshold: 1, RequestedMaxAckDelay: 25 * time.Millisecond, ReorderingThreshold: 1},
		&AckFrequencyFrame{SequenceNumber: MaxVarint, AckElicitingThreshold: MaxVarint, RequestedMaxAckDelay: maxRequestedAckDelayUs*time.Microsecond - time.Microsecond, ReorderingThreshold: MaxVarint},
		&ImmediateAckFrame{},
	}
}

func TestFrameRoundTrip(t *testing.T) {
	var parser FrameParser
	for _, f := range frameCases(t) {
		b, err := f.Append([]byte{0xee})
		if err != nil {
			t.Fatalf("%T %+v: %v", f, f, err)
		}
		b = b[1:]
		if len(b) != f.Len() {
			t.Errorf("%T: Len() = %d, appended %d bytes", f, f.Len(), len(b))
		}
		if ft, _, err := parseFrameType(b); err != nil || ft != f.Type() {
			t.Errorf("%T: Type() = %v, encoded type %v (%v)", f, f.Type(), ft, err)
		}
		for name, parse := range map[string]func([]byte) (Frame, int, error){
			"ParseFrame": ParseFrame, "FrameParser": parser.Parse,
		} {
			got, n, err := parse(b)
			if err != nil || n != len(b) {
				t.Fatalf("%s(%T %x) = %d bytes, %v", name, f, b, n, err)
			}
			if !reflect.DeepEqual(got, f) {
				t.Errorf("%s round trip:\n got %+v\nwant %+v", name, got, f)
			}
		}
	}
}

// lengthDelimited reports whether the frame's own fields mark its end, so
// that cutting it short must be an error. PADDING, and STREAM and
// DATAGRAM without a Length field, run to the end of the packet.
func lengthDelimited(f Frame) bool {
	switch f := f.(type) {
	case *PaddingFrame:
		return false
	case *StreamFrame:
		return f.DataLenPresent
	case *DatagramFrame:
		return f.DataLenPresent
	}
	return true
}

func TestFrameTruncatedPrefixes(t *testing.T) {
	for _, f := range frameCases(t) {
		b, _ := f.Append(nil)
		for i := range len(b) {
			_, _, err := ParseFrame(b[:i])
			if !lengthDelimited(f) && i > 0 {
				continue
			}
			var te *TransportError
			if !errors.As(err, &te) || te.Code != CodeFrameEncodingError {
				t.Errorf("%T: prefix of %d/%d bytes: err %v, want FRAME_ENCODING_ERROR", f, i, len(b), err)
			}
		}
	}
}

// Frame types must use their minimal encoding (RFC 9000 section 12.4).
func TestFrameTypeEncoding(t *testing.T) {
	checkFrameError(t, "two-byte PING", []byte{0x40, 0x01}, CodeProtocolViolation, FrameTypePing)
	checkFrameError(t, "unknown type", []byte{0x21}, CodeFrameEncodingError, 0x21)
	checkFrameError(t, "unknown two-byte type", []byte{0x40, 0x40}, CodeFrameEncodingError, 0x40)
	checkFrameError(t, "empty payload", nil, CodeFrameEncodingError, 0)
}

func checkFrameError(t *testing.T, name string, b []byte, code uint64, ft FrameType) {
	t.Helper()
	_, _, err := ParseFrame(b)
	var te *TransportError
	if !errors.As(err, &te) || te.Code != code || te.FrameType != uint64(ft) {
		t.Errorf("%s: err %v, want %s in frame %v", name, err, TransportErrorName(code), ft)
	}
}

// Values the RFC forbids are rejected with the error code it names.
func TestFrameValidation(t *testing.T) {
	seq := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	v := func(x uint64) []byte { b, _ := AppendVarint(nil, x); return b }
	cid21 := append([]byte{21}, make([]byte, 21)...)
	token := make([]byte, 16)
	for _, tc := range []struct {
		name string
		b    []byte
		code uint64
		ft   FrameType
	}{
		{"ACK first range below 0", seq(v(2), v(5), v(0), v(0), v(6)), CodeFrameEncodingError, FrameTypeAck},
		{"ACK gap below 0", seq(v(2), v(10), v(0), v(1), v(5), v(8), v(0)), CodeFrameEncodingError, FrameTypeAck},
		{"ACK range below 0", seq(v(2), v(10), v(0), v(1), v(5), v(1), v(3)), CodeFrameEncodingError, FrameTypeAck},
		{"ACK huge count", seq(v(2), v(10), v(0), v(MaxVarint), v(0)), CodeFrameEncodingError, FrameTypeAck},
		{"ACK_ECN without counts", seq(v(3), v(10), v(0), v(0), v(0)), CodeFrameEncodingError, FrameTypeAckECN},
		{"STREAM beyond 2^62", seq(v(0x0e), v(0), v(MaxVarint), v(1), []byte{1}), CodeFrameEncodingError, 0x0e},
		{"CRYPTO beyond 2^62", seq(v(0x06), v(MaxVarint), v(1), []byte{1}), CodeFrameEncodingError, FrameTypeCrypto},
		{"MAX_STREAMS above 2^60", seq(v(0x12), v(MaxStreamsLimit+1)), CodeFrameEncodingError, FrameTypeMaxStreamsBidi},
		{"STREAMS_BLOCKED above 2^60", seq(v(0x17), v(MaxStreamsLimit+1)), CodeStreamLimitError, FrameTypeStreamsBlockedUni},
		{"NEW_TOKEN empty", seq(v(0x07), v(0)), CodeFrameEncodingError, FrameTypeNewToken},
		{"NEW_CONNECTION_ID empty ID", seq(v(0x18), v(1), v(0), []byte{0}, token), CodeFrameEncodingError, FrameTypeNewConnectionID},
		{"NEW_CONNECTION_ID 21-byte ID", seq(v(0x18), v(1), v(0), cid21, token), CodeFrameEncodingError, FrameTypeNewConnectionID},
		{"NEW_CONNECTION_ID retire above seq", seq(v(0x18), v(1), v(2), []byte{1, 9}, token), CodeFrameEncodingError, FrameTypeNewConnectionID},
		{"CONNECTION_CLOSE reason past end", seq(v(0x1c), v(1), v(0), v(5), []byte("abc")), CodeFrameEncodingError, FrameTypeConnectionClose},
	} {
		checkFrameError(t, tc.name, tc.b, tc.code, tc.ft)
	}
}

// Writers refuse frames whose fields the RFC forbids or the encoding
// cannot hold, and append nothing.
func TestFrameAppendRejects(t *testing.T) {
	for _, f := range []Frame{
		&PaddingFrame{},
		&AckFrame{},
		&AckFrame{Ranges: []AckRange{{Smallest: 3, Largest: 2}}},
		&AckFrame{Ranges: []AckRange{{Smallest: 5, Largest: 9}, {Smallest: 1, Largest: 4}}},
		&AckFrame{Ranges: []AckRange{{Smallest: 5, Largest: 9}, {Smallest: 1, Largest: 12}}},
		&AckFrame{Ranges: []AckRange{{Largest: MaxVarint + 1}}},
		&AckFrame{Ranges: []AckRange{{}}, HasECN: true, ECN: ECNCounts{CE: MaxVarint + 1}},
		&StreamFrame{StreamID: MaxVarint + 1},
		&StreamFrame{Offset: MaxVarint, Data: []byte{1}},
		&CryptoFrame{Offset: MaxVarint, Data: []byte{1}},
		&NewTokenFrame{},
		&MaxStreamsFrame{Maximum: MaxStreamsLimit + 1},
		&StreamsBlockedFrame{Limit: MaxStreamsLimit + 1},
		&MaxDataFrame{Maximum: MaxVarint + 1},
		&ResetStreamFrame{FinalSize: MaxVarint + 1},
		&NewConnectionIDFrame{SequenceNumber: 1, ConnectionID: mustConnID(t, []byte{1}), RetirePriorTo: 2},
		&NewConnectionIDFrame{SequenceNumber: 1},
		&ConnectionCloseFrame{IsApplicationError: true, TriggerType: FrameTypePing},
		&ConnectionCloseFrame{ErrorCode: MaxVarint + 1},
	} {
		if b, err := f.Append([]byte{9}); err == nil || len(b) != 1 {
			t.Errorf("%T %+v: Append = %x, %v; want an error and no bytes", f, f, b, err)
		}
	}
}

func TestStreamFrameTypeBits(t *testing.T) {
	for _, tc := range []struct {
		f    StreamFrame
		want FrameType
	}{
		{StreamFrame{}, 0x08},
		{StreamFrame{Fin: true}, 0x09},
		{StreamFrame{DataLenPresent: true}, 0x0a},
		{StreamFrame{Offset: 1}, 0x0c},
		{StreamFrame{Offset: 1, DataLenPresent: true, Fin: true}, 0x0f},
	} {
		if got := tc.f.Type(); got != tc.want {
			t.Errorf("%+v: Type() = %#x, want %#x", tc.f, got, tc.want)
		}
	}
	// An OFF bit with a zero offset parses, and re-encodes without it.
	f, n, err := ParseStreamFrame([]byte{0x0d, 4, 0, 'a', 'b'})
	if err != nil || n != 5 || f.Offset != 0 || !f.Fin || string(f.Data) != "ab" {
		t.Fatalf("ParseStreamFrame = %+v, %d, %v", f, n, err)
	}
	if b, _ := f.Append(nil); !bytes.Equal(b, []byte{0x09, 4, 'a', 'b'}) {
		t.Errorf("canonical re-encoding %x", b)
	}
	if _, _, err := ParseStreamFrame([]byte{0x01}); err == nil {
		t.Error("ParseStreamFrame accepted a PING")
	}
}

// The data of a parsed STREAM frame aliases the packet: no copy.
func TestStreamFrameAliasesInput(t *testing.T) {
	b := []byte{0x0a, 4, 3, 'a', 'b', 'c'}
	f, _, err := ParseStreamFrame(b)
	if err != nil {
		t.Fatal(err)
	}
	b[3] = 'z'
	if f.Data[0] != 'z' {
		t.Error("STREAM data was copied")
	}
}

func TestMaxStreamDataLen(t *testing.T) {
	for _, streamID := range []uint64{0, 63, 64, 1 << 20, MaxVarint} {
		for _, offset := range []uint64{0, 5, 1 << 30, MaxVarint - 10} {
			for _, withLen := range []bool{false, true} {
				for budget := 0; budget < 17000; budget += 1 + budget/50 {
					checkStreamFit(t, budget, streamID, offset, withLen)
				}
			}
		}
	}
}

func checkStreamFit(t *testing.T, budget int, streamID, offset uint64, withLen bool) {
	t.Helper()
	n, ok := MaxStreamDataLen(budget, streamID, offset, withLen)
	f := StreamFrame{StreamID: streamID, Offset: offset, DataLenPresent: withLen}
	if !ok {
		if f.Len() <= budget {
			t.Fatalf("budget %d id %d off %d len %v: empty frame of %d bytes fits", budget, streamID, offset, withLen, f.Len())
		}
		return
	}
	f.Data = make([]byte, n)
	if f.Len() > budget {
		t.Fatalf("budget %d id %d off %d len %v: %d bytes give a %d-byte frame", budget, streamID, offset, withLen, n, f.Len())
	}
	f.Data = make([]byte, n+1)
	if f.Len() <= budget && offset+uint64(n) < MaxVarint {
		t.Fatalf("budget %d id %d off %d len %v: %d bytes fit, not only %d", budget, streamID, offset, withLen, n+1, n)
	}
}

func TestMaxCryptoAndDatagramDataLen(t *testing.T) {
	for budget := 0; budget < 20000; budget += 1 + budget/40 {
		if n, ok := MaxCryptoDataLen(budget, 1000); ok {
			f := CryptoFrame{Offset: 1000, Data: make([]byte, n)}
			g := CryptoFrame{Offset: 1000, Data: make([]byte, n+1)}
			if f.Len() > budget || g.Len() <= budget {
				t.Fatalf("crypto budget %d: %d bytes", budget, n)
			}
		} else if (&CryptoFrame{Offset: 1000}).Len() <= budget {
			t.Fatalf("crypto budget %d: empty frame fits", budget)
		}
		for _, withLen := range []bool{false, true} {
			n, ok := MaxDatagramDataLen(budget, withLen)
			f := DatagramFrame{Data: make([]byte, max(n, 0)), DataLenPresent: withLen}
			g := DatagramFrame{Data: make([]byte, n+1), DataLenPresent: withLen}
			empty := DatagramFrame{DataLenPresent: withLen}
			if ok != (empty.Len() <= budget) || ok && (f.Len() > budget || g.Len() <= budget) {
				t.Fatalf("datagram budget %d len %v: %d bytes, ok %v", budget, withLen, n, ok)
			}
		}
	}
}

func TestAckFrameHelpers(t *testing.T) {
	f := AckFrame{Ranges: []AckRange{{Smallest: 90, Largest: 100}, {Smallest: 50, Largest: 60}, {Smallest: 0, Largest: 10}}}
	if f.LargestAcked() != 100 || (&AckFrame{}).LargestAcked() != InvalidPacketNumber {
		t.Error("LargestAcked")
	}
	for pn := uint64(0); pn <= 110; pn++ {
		want := pn <= 10 || pn >= 50 && pn <= 60 || pn >= 90 && pn <= 100
		if f.AcksPacket(pn) != want {
			t.Errorf("AcksPacket(%d) = %v", pn, !want)
		}
	}
	full := f.Len()
	g := f
	if !g.TruncateToLen(full) || len(g.Ranges) != 3 {
		t.Error("TruncateToLen(Len()) dropped ranges")
	}
	if !g.TruncateToLen(full-1) || len(g.Ranges) != 2 || g.Len() > full-1 {
		t.Errorf("TruncateToLen(%d) left %d ranges, %d bytes", full-1, len(g.Ranges), g.Len())
	}
	if g.TruncateToLen(2) || len(g.Ranges) != 1 {
		t.Errorf("TruncateToLen(2) = true or left %d ranges", len(g.Ranges))
	}
}

func TestAckFrameTruncateCountField(t *testing.T) {
	// 65 ranges: the count field shrinks from 2 bytes to 1 when one is
	// dropped, and Len must follow.
	var f AckFrame
	for i := uint64(0); i < 65; i++ {
		top := 1000 - 3*i
		f.Ranges = append(f.Ranges, AckRange{Smallest: top, Largest: top})
	}
	for budget := f.Len(); budget > 0; budget-- {
		g := AckFrame{Ranges: append([]AckRange(nil), f.Ranges...)}
		if g.TruncateToLen(budget) {
			b, err := g.Append(nil)
			if err != nil || len(b) > budget || len(b) != g.Len() {
				t.Fatalf("budget %d: %d bytes, Len %d, %v", budget, len(b), g.Len(), err)
			}
		}
	}
}

func TestAckDelayConversion(t *testing.T) {
	if d := DecodeAckDelay(1000, 3); d.Microseconds() != 8000 {
		t.Errorf("DecodeAckDelay(1000, 3) = %v", d)
	}
	if EncodeAckDelay(DecodeAckDelay(1000, 3), 3) != 1000 {
		t.Error("EncodeAckDelay does not invert DecodeAckDelay")
	}
	if d := DecodeAckDelay(MaxVarint, 20); d <= 0 {
		t.Errorf("DecodeAckDelay overflow: %v", d)
	}
	if EncodeAckDelay(-5, 3) != 0 {
		t.Error("negative delay")
	}
}

func TestParseAckFrameReusesRanges(t *testing.T) {
	src := AckFrame{Ranges: []AckRange{{Smallest: 9, Largest: 10}, {Smallest: 1, Largest: 2}}}
	b, _ := src.Append(nil)
	storage := make([]AckRange, 0, 8)
	f, n, err := ParseAckFrame(b, storage)
	if err != nil || n != len(b) || &f.Ranges[0] != &storage[:1][0] {
		t.Errorf("ParseAckFrame did not reuse the range slice: %v", err)
	}
	if _, _, err := ParseAckFrame([]byte{0x01}, nil); err == nil {
		t.Error("ParseAckFrame accepted a PING")
	}
}

func TestConnectionCloseFromError(t *testing.T) {
	e := &TransportError{Code: CodeStreamLimitError, FrameType: uint64(FrameTypeStreamsBlockedBidi), Reason: "limit"}
	f := ConnectionCloseFromError(e)
	if f.Type() != FrameTypeConnectionClose || f.ErrorCode != e.Code || f.TriggerType != FrameTypeStreamsBlockedBidi || f.ReasonPhrase != "limit" {
		t.Errorf("ConnectionCloseFromError = %+v", f)
	}
	if s := e.Error(); s != "quic: STREAM_LIMIT_ERROR in frame 0x16: limit" {
		t.Errorf("Error() = %q", s)
	}
}

func TestFrameParserExtension(t *testing.T) {
	var p FrameParser
	p.Extension = func(ft FrameType, b []byte) (Frame, int, error) {
		if ft != 0x32a80fec {
			return nil, 0, frameError(ft, CodeFrameEncodingError, "unknown")
		}
		return &PingFrame{}, len(b), nil
	}
	b, _ := AppendVarint(nil, 0x32a80fec)
	if _, n, err := p.Parse(b); err != nil || n != len(b) {
		t.Errorf("extension frame: %d, %v", n, err)
	}
}

// Table 3 of RFC 9000 and RFC 9221 section 4.
func TestFrameRules(t *testing.T) {
	type row struct {
		t                                  FrameType
		pkts                               string // I, H, 0, 1
		ackEliciting, inFlight, probing, f bool
	}
	rows := []row{
		{FrameTypePadding, "IH01", false, true, true, false},
		{FrameTypePing, "IH01", true, true, false, false},
		{FrameTypeAck, "IH_1", false, false, false, false},
		{FrameTypeAckECN, "IH_1", false, false, false, false},
		{FrameTypeResetStream, "__01", true, true, false, false},
		{FrameTypeStopSending, "__01", true, true, false, false},
		{FrameTypeCrypto, "IH_1", true, true, false, false},
		{FrameTypeNewToken, "___1", true, true, false, false},
		{FrameTypeStream, "__01", true, true, false, true},
		{FrameTypeStream | 7, "__01", true, true, false, true},
		{FrameTypeMaxData, "__01", true, true, false, false},
		{FrameTypeMaxStreamData, "__01", true, true, false, false},
		{FrameTypeMaxStreamsBidi, "__01", true, true, false, false},
		{FrameTypeMaxStreamsUni, "__01", true, true, false, false},
		{FrameTypeDataBlocked, "__01", true, true, false, false},
		{FrameTypeStreamDataBlocked, "__01", true, true, false, false},
		{FrameTypeStreamsBlockedBidi, "__01", true, true, false, false},
		{FrameTypeStreamsBlockedUni, "__01", true, true, false, false},
		{FrameTypeNewConnectionID, "__01", true, true, true, false},
		{FrameTypeRetireConnectionID, "__01", true, true, false, false},
		{FrameTypePathChallenge, "__01", true, true, true, false},
		{FrameTypePathResponse, "___1", true, true, true, false},
		{FrameTypeConnectionClose, "IH01", false, true, false, false},
		{FrameTypeConnectionCloseApp, "__01", false, true, false, false},
		{FrameTypeHandshakeDone, "___1", true, true, false, false},
		{FrameTypeDatagram, "__01", true, true, false, false},
		{FrameTypeDatagramWithLen, "__01", true, true, false, false},
		{0x21, "____", true, true, false, false},
	}
	pts := []PacketType{PacketTypeInitial, PacketTypeHandshake, PacketType0RTT, PacketType1RTT}
	for _, r := range rows {
		for i, pt := range pts {
			want := r.pkts[i] != '_'
			if r.t.AllowedIn(pt) != want {
				t.Errorf("%v in %v: allowed %v, want %v", r.t, pt, !want, want)
			}
			var te *TransportError
			if err := CheckFrameAllowed(r.t, pt); want != (err == nil) || !want && (!errors.As(err, &te) || te.Code != CodeProtocolViolation) {
				t.Errorf("CheckFrameAllowed(%v, %v) = %v", r.t, pt, err)
			}
		}
		if r.t.AllowedIn(PacketTypeRetry) {
			t.Errorf("%v allowed in Retry", r.t)
		}
		if r.t.IsAckEliciting() != r.ackEliciting || r.t.CountsInFlight() != r.inFlight ||
			r.t.IsProbing() != r.probing || r.t.IsFlowControlled() != r.f {
			t.Errorf("%v: eliciting %v in flight %v probing %v flow %v", r.t, r.t.IsAckEliciting(), r.t.CountsInFlight(), r.t.IsProbing(), r.t.IsFlowControlled())
		}
	}
}
