package wire

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

func FuzzVarint(f *testing.F) {
	for _, s := range []string{"25", "4025", "7bbd", "9d7f3e7d", "c2197c5eff14e88c", "", "c0"} {
		f.Add(mustHex(f, s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := ParseVarint(b)
		if err != nil {
			return
		}
		enc, err := AppendVarintWithLen(nil, v, n)
		if err != nil || !bytes.Equal(enc, b[:n]) {
			t.Fatalf("re-encoding %d on %d bytes = %x, %v; input %x", v, n, enc, err, b[:n])
		}
		minimal, _ := AppendVarint(nil, v)
		if got, m, err := ParseVarint(minimal); err != nil || got != v || m != VarintLen(v) {
			t.Fatalf("minimal encoding of %d: %d, %d, %v", v, got, m, err)
		}
	})
}

func FuzzHeader(f *testing.F) {
	for _, h := range longHeaderCases(f) {
		b, _ := AppendLongHeader(nil, &h)
		f.Add(append(b, make([]byte, int(h.Length)-h.PacketNumberLen)...), uint8(0))
	}
	f.Add(mustHex(f, "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba"), uint8(0))
	short, _ := AppendShortHeader(nil, &ShortHeader{DstConnID: mustConnID(f, []byte{1, 2, 3, 4}), PacketNumberLen: 2})
	f.Add(short, uint8(4))
	vn, _ := AppendVersionNegotiation(nil, &VersionNegotiation{DstConnID: []byte{1}, Versions: []Version{Version1}}, 0)
	f.Add(vn, uint8(0))
	f.Fuzz(func(t *testing.T, b []byte, dstConnIDLen uint8) {
		if n, err := PacketLen(b); err == nil && (n <= 0 || n > len(b)) {
			t.Fatalf("PacketLen = %d for %d bytes", n, len(b))
		}
		PeekPacketType(b)
		ParseInvariantLongHeader(b)
		checkLongHeaderRoundTrip(t, b)
		checkShortHeaderRoundTrip(t, b, int(dstConnIDLen%(MaxConnectionIDLen+1)))
		checkVersionNegotiationRoundTrip(t, b)
	})
}

func checkLongHeaderRoundTrip(t *testing.T, b []byte) {
	h, pnOffset, err := ParseLongHeader(b)
	if err != nil {
		return
	}
	h2 := h
	h2.PacketNumberLen = 1
	enc, err := AppendLongHeader(nil, &h2)
	if err != nil {
		t.Fatalf("parsed header %+v does not append: %v", h, err)
	}
	if h.Type == PacketTypeRetry {
		enc = append(enc, h.IntegrityTag[:]...)
	} else {
		enc = append(enc, b[pnOffset+1:]...)
	}
	got, _, err := ParseLongHeader(enc)
	if err != nil || !reflect.DeepEqual(got, h) {
		t.Fatalf("long header round trip:\n got %+v, %v\nwant %+v", got, err, h)
	}
}

func checkShortHeaderRoundTrip(t *testing.T, b []byte, dstConnIDLen int) {
	h, _, err := ParseShortHeader(b, dstConnIDLen)
	if err != nil {
		return
	}
	h.PacketNumberLen = 1
	enc, err := AppendShortHeader(nil, &h)
	if err != nil {
		t.Fatal(err)
	}
	got, pnOffset, err := ParseShortHeader(enc, dstConnIDLen)
	if err != nil || got.DstConnID != h.DstConnID || got.SpinBit != h.SpinBit || pnOffset != 1+dstConnIDLen {
		t.Fatalf("short header round trip: %+v, %v; want %+v", got, err, h)
	}
}

func checkVersionNegotiationRoundTrip(t *testing.T, b []byte) {
	vn, err := ParseVersionNegotiation(b)
	if err != nil {
		return
	}
	enc, err := AppendVersionNegotiation(nil, &vn, b[0])
	if err != nil || !bytes.Equal(enc[1:], b[1:]) {
		t.Fatalf("version negotiation re-encoding %x, %v; input %x", enc, err, b)
	}
}

// FuzzFrame checks that any frame that parses re-encodes canonically: the
// re-encoding is no longer than the input, parses to the same frame, and
// re-encodes to itself.
func FuzzFrame(f *testing.F) {
	for _, fr := range frameCases(f) {
		b, _ := fr.Append(nil)
		f.Add(b)
	}
	f.Add([]byte{0x02, 0x40, 0x0a, 0x00, 0x01, 0x02, 0x01, 0x00}) // ACK, non-minimal varint
	f.Add([]byte{0x0d, 0x04, 0x00, 'a', 'b'})                     // STREAM, OFF bit, offset 0
	var dirt [][]byte
	for _, fr := range frameCases(f) {
		enc, _ := fr.Append(nil)
		dirt = append(dirt, enc)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := ParseFrame(b)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("ParseFrame consumed %d of %d bytes", n, len(b))
		}
		enc, err := fr.Append(nil)
		if err != nil {
			t.Fatalf("parsed %T %+v does not append: %v", fr, fr, err)
		}
		if len(enc) != fr.Len() || len(enc) > n {
			t.Fatalf("%T: re-encoding of %d bytes, Len %d, input %d", fr, len(enc), fr.Len(), n)
		}
		again, n2, err := ParseFrame(enc)
		if err != nil || n2 != len(enc) || !reflect.DeepEqual(again, fr) {
			t.Fatalf("%T round trip: %+v, %d, %v; want %+v", fr, again, n2, err, fr)
		}
		if enc2, _ := again.Append(nil); !bytes.Equal(enc2, enc) {
			t.Fatalf("%T re-encoding is not stable: %x then %x", fr, enc, enc2)
		}
		checkParserReuse(t, dirt, b[:n], fr)
	})
}

// checkParserReuse parses b with a FrameParser whose frames hold values
// from parsing dirt first; every field must be overwritten.
func checkParserReuse(t *testing.T, dirt [][]byte, b []byte, want Frame) {
	var p FrameParser
	for _, enc := range dirt {
		p.Parse(enc)
	}
	got, _, err := p.Parse(b)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("reused FrameParser: %+v, %v; want %+v", got, err, want)
	}
}

// FuzzFrameFields builds each frame type from fuzzed field values and
// checks parse(append(x)) == x whenever x is valid.
func FuzzFrameFields(f *testing.F) {
	for kind := range uint8(frameKinds) {
		f.Add(kind, uint64(1), uint64(2), uint64(3), []byte("0123456789abcdefghijklmnopqrstuvwxyz"), kind%2 == 0)
		f.Add(kind, uint64(MaxVarint), uint64(0), uint64(MaxVarint), []byte{}, kind%2 == 1)
	}
	f.Fuzz(func(t *testing.T, kind uint8, a, b, c uint64, data []byte, flag bool) {
		x := buildFrame(kind, a, b, c, data, flag)
		enc, err := x.Append([]byte{0xee})
		if err != nil {
			if len(enc) != 1 {
				t.Fatalf("%T: failed Append wrote %x", x, enc)
			}
			return
		}
		enc = enc[1:]
		if len(enc) != x.Len() {
			t.Fatalf("%T: Len %d, appended %d", x, x.Len(), len(enc))
		}
		got, n, err := ParseFrame(enc)
		if err != nil || n != len(enc) || !reflect.DeepEqual(got, x) {
			t.Fatalf("%T round trip: %+v, %d, %v; want %+v", x, got, n, err, x)
		}
	})
}

const frameKinds = 23

func buildFrame(kind uint8, a, b, c uint64, data []byte, flag bool) Frame {
	data = nilIfEmpty(data)
	switch kind % frameKinds {
	case 0:
		return &PaddingFrame{Length: int(a % 1500)}
	case 1:
		return &PingFrame{}
	case 2:
		return buildAckFrame(a, b, c, data, flag)
	case 3:
		return &ResetStreamFrame{StreamID: a, ErrorCode: b, FinalSize: c}
	case 4:
		return &StopSendingFrame{StreamID: a, ErrorCode: b}
	case 5:
		return &CryptoFrame{Offset: a, Data: data}
	case 6:
		return &NewTokenFrame{Token: data}
	case 7:
		return &StreamFrame{StreamID: a, Offset: b, Data: data, Fin: flag, DataLenPresent: c&1 == 1}
	case 8:
		return &MaxDataFrame{Maximum: a}
	case 9:
		return &MaxStreamDataFrame{StreamID: a, Maximum: b}
	case 10:
		return &MaxStreamsFrame{Unidirectional: flag, Maximum: a}
	case 11:
		return &DataBlockedFrame{Limit: a}
	case 12:
		return &StreamDataBlockedFrame{StreamID: a, Limit: b}
	case 13:
		return &StreamsBlockedFrame{Unidirectional: flag, Limit: a}
	case 14:
		f := &NewConnectionIDFrame{SequenceNumber: a, RetirePriorTo: b}
		f.ConnectionID, _ = NewConnectionID(data[:min(len(data), int(c%21))])
		copy(f.StatelessResetToken[:], data)
		return f
	case 15:
		return &RetireConnectionIDFrame{SequenceNumber: a}
	case 16:
		f := &PathChallengeFrame{}
		copy(f.Data[:], data)
		return f
	case 17:
		f := &PathResponseFrame{}
		copy(f.Data[:], data)
		return f
	case 18:
		return &ConnectionCloseFrame{IsApplicationError: flag, ErrorCode: a, TriggerType: FrameType(b), ReasonPhrase: string(data)}
	case 19:
		return &HandshakeDoneFrame{}
	case 20:
		return &AckFrequencyFrame{SequenceNumber: a, AckElicitingThreshold: b, RequestedMaxAckDelay: time.Duration(c%(1<<40)) * time.Microsecond,
			ReorderingThreshold: uint64(len(data))}
	case 21:
		return &ImmediateAckFrame{}
	default:
		return &DatagramFrame{Data: data, DataLenPresent: flag}
	}
}

// buildAckFrame derives descending ranges from data: each pair of bytes
// is a gap and a range length below the previous range.
func buildAckFrame(largest, delay, ecn uint64, data []byte, withECN bool) *AckFrame {
	f := &AckFrame{AckDelay: delay, HasECN: withECN}
	if withECN {
		f.ECN = ECNCounts{ECT0: ecn, ECT1: ecn / 2, CE: ecn / 3}
	}
	largest %= MaxPacketNumber + 1
	first := uint64(0)
	if len(data) > 0 {
		first = min(uint64(data[0]), largest)
	}
	f.Ranges = append(f.Ranges, AckRange{Smallest: largest - first, Largest: largest})
	for i := 1; i+1 < len(data); i += 2 {
		smallest := f.Ranges[len(f.Ranges)-1].Smallest
		gap, length := uint64(data[i]), uint64(data[i+1])
		if smallest < gap+2+length {
			break
		}
		top := smallest - gap - 2
		f.Ranges = append(f.Ranges, AckRange{Smallest: top - length, Largest: top})
	}
	return f
}

// FuzzTransportParameters checks that parameters that parse re-encode to
// an encoding that parses to the same parameters and is stable.
func FuzzTransportParameters(f *testing.F) {
	server, _ := func() ([]byte, error) { p := serverParams(f); return p.Append(nil, PerspectiveServer) }()
	client, _ := func() ([]byte, error) { p := clientParams(f); return p.Append(nil, PerspectiveClient) }()
	f.Add(server, true)
	f.Add(client, false)
	withMinAckDelay, _ := func() ([]byte, error) {
		p := clientParams(f)
		_ = p.SetMinAckDelay(time.Millisecond)
		return p.Append(nil, PerspectiveClient)
	}()
	f.Add(withMinAckDelay, false)
	f.Add([]byte{0x0f, 0x00, 27, 0x01, 0x00, 0x40, 0x40, 0x00}, false)
	f.Fuzz(func(t *testing.T, b []byte, fromServer bool) {
		sender := PerspectiveClient
		if fromServer {
			sender = PerspectiveServer
		}
		p, err := ParseTransportParameters(b, sender)
		if err != nil {
			return
		}
		enc, err := p.Append(nil, sender)
		if err != nil {
			t.Fatalf("parsed parameters do not append: %v", err)
		}
		again, err := ParseTransportParameters(enc, sender)
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("round trip:\n got %+v, %v\nwant %+v", again, err, p)
		}
		if enc2, _ := again.Append(nil, sender); !bytes.Equal(enc2, enc) {
			t.Fatalf("re-encoding is not stable: %x then %x", enc, enc2)
		}
	})
}
