package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustConnID(t testing.TB, b []byte) ConnectionID {
	t.Helper()
	c, err := NewConnectionID(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The unprotected header of the client Initial of RFC 9001 appendix A.2
// (version 1) and RFC 9369 appendix A.1 (version 2).
func TestLongHeaderRFCClientInitial(t *testing.T) {
	for _, tc := range []struct {
		version Version
		want    string
	}{
		{Version1, "c300000001088394c8f03e5157080000449e00000002"},
		{Version2, "d36b3343cf088394c8f03e5157080000449e00000002"},
	} {
		h := LongHeader{
			Type:            PacketTypeInitial,
			Version:         tc.version,
			DstConnID:       mustConnID(t, mustHex(t, "8394c8f03e515708")),
			Length:          1182,
			LengthLen:       2,
			PacketNumber:    2,
			PacketNumberLen: 4,
		}
		b, err := AppendLongHeader(nil, &h)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(b); got != tc.want {
			t.Errorf("%v Initial header = %s, want %s", tc.version, got, tc.want)
		}
		packet := append(b, make([]byte, 1182-4)...)
		got, pnOffset, err := ParseLongHeader(packet)
		if err != nil {
			t.Fatal(err)
		}
		if pnOffset != len(b)-4 || got.Length != 1182 || got.LengthLen != 2 || got.DstConnID != h.DstConnID {
			t.Errorf("%v parse = %+v, pn offset %d", tc.version, got, pnOffset)
		}
		if n, err := PacketLen(packet); err != nil || n != len(packet) {
			t.Errorf("PacketLen = %d, %v; want %d", n, err, len(packet))
		}
	}
}

// The Retry packet of RFC 9001 appendix A.4.
func TestParseRetryRFC(t *testing.T) {
	b := mustHex(t, "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba")
	h, n, err := ParseLongHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.Type != PacketTypeRetry || h.Version != Version1 || n != len(b) ||
		h.DstConnID.Len() != 0 || h.SrcConnID.String() != "f067a5502a4262b5" ||
		string(h.Token) != "token" || hex.EncodeToString(h.IntegrityTag[:]) != "04a265ba2eff4d829058fb3f0f2496ba" {
		t.Fatalf("parsed Retry = %+v, n %d", h, n)
	}
	again, err := AppendLongHeader(nil, &h)
	if err != nil {
		t.Fatal(err)
	}
	again = append(again, h.IntegrityTag[:]...)
	// Only the four unused bits of the first byte differ.
	if again[0] != 0xf0 || !bytes.Equal(again[1:], b[1:]) {
		t.Errorf("re-encoded Retry = %x", again)
	}
	pseudo := AppendRetryPseudoPacket(nil, mustConnID(t, mustHex(t, "8394c8f03e515708")), b[:len(b)-16])
	if want := "088394c8f03e515708" + hex.EncodeToString(b[:len(b)-16]); hex.EncodeToString(pseudo) != want {
		t.Errorf("pseudo-packet = %x, want %s", pseudo, want)
	}
}

func longHeaderCases(t testing.TB) []LongHeader {
	cid20 := mustConnID(t, bytes.Repeat([]byte{0xab}, 20))
	cid1 := mustConnID(t, []byte{7})
	var cases []LongHeader
	for _, v := range []Version{Version1, Version2} {
		cases = append(cases,
			LongHeader{Type: PacketTypeInitial, Version: v, DstConnID: cid20, SrcConnID: cid1, Token: []byte("tok"), Length: 40, LengthLen: 2, PacketNumber: 0x01020304, PacketNumberLen: 4},
			LongHeader{Type: PacketTypeInitial, Version: v, Length: 1, LengthLen: 1, PacketNumberLen: 1},
			LongHeader{Type: PacketType0RTT, Version: v, DstConnID: cid1, SrcConnID: cid20, Length: 300, LengthLen: 8, PacketNumber: 77, PacketNumberLen: 2},
			LongHeader{Type: PacketTypeHandshake, Version: v, DstConnID: cid1, Length: 3, LengthLen: 1, PacketNumber: 0xabcdef, PacketNumberLen: 3},
		)
	}
	return cases
}

func TestLongHeaderRoundTrip(t *testing.T) {
	for _, h := range longHeaderCases(t) {
		b, err := AppendLongHeader([]byte{0xee}, &h)
		if err != nil {
			t.Fatalf("%v %v: %v", h.Version, h.Type, err)
		}
		b = b[1:]
		first := b[0]
		if first&0xc0 != 0xc0 || PacketNumberLenFromFirstByte(first) != h.PacketNumberLen || CheckReservedBits(first) != nil {
			t.Errorf("%v %v first byte %#x", h.Version, h.Type, first)
		}
		pnLen := h.PacketNumberLen
		packet := append(b, make([]byte, int(h.Length)-pnLen)...)
		got, pnOffset, err := ParseLongHeader(packet)
		if err != nil {
			t.Fatalf("%v %v: %v", h.Version, h.Type, err)
		}
		pn, _, err := ParsePacketNumber(packet[pnOffset:], PacketNumberLenFromFirstByte(first))
		if err != nil || pn != h.PacketNumber&(1<<(8*pnLen)-1) {
			t.Errorf("%v %v packet number %d, %v", h.Version, h.Type, pn, err)
		}
		got.PacketNumber, got.PacketNumberLen = h.PacketNumber, h.PacketNumberLen
		if !reflect.DeepEqual(got, h) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, h)
		}
		if typ, v, err := PeekPacketType(packet); err != nil || typ != h.Type || v != h.Version {
			t.Errorf("PeekPacketType = %v, %v, %v", typ, v, err)
		}
		// Every strict prefix is an error: the Length field bounds the
		// packet.
		for i := range len(packet) {
			if _, _, err := ParseLongHeader(packet[:i]); err == nil {
				t.Errorf("%v %v: prefix of %d bytes parsed", h.Version, h.Type, i)
			}
		}
	}
}

// RFC 9369 section 3.2 rotates the long packet types.
func TestLongHeaderTypeBits(t *testing.T) {
	for _, tc := range []struct {
		v     Version
		t     PacketType
		first byte
	}{
		{Version1, PacketTypeInitial, 0xc0}, {Version1, PacketType0RTT, 0xd0},
		{Version1, PacketTypeHandshake, 0xe0}, {Version1, PacketTypeRetry, 0xf0},
		{Version2, PacketTypeInitial, 0xd0}, {Version2, PacketType0RTT, 0xe0},
		{Version2, PacketTypeHandshake, 0xf0}, {Version2, PacketTypeRetry, 0xc0},
	} {
		h := LongHeader{Type: tc.t, Version: tc.v, Length: 1, PacketNumberLen: 1, Token: nil}
		if tc.t == PacketTypeRetry {
			h.Token = []byte{1}
		}
		b, err := AppendLongHeader(nil, &h)
		if err != nil || b[0] != tc.first {
			t.Errorf("%v %v first byte %#x, %v; want %#x", tc.v, tc.t, b[0], err, tc.first)
		}
	}
}

func TestLongHeaderErrors(t *testing.T) {
	valid, _ := AppendLongHeader(nil, &LongHeader{Type: PacketTypeHandshake, Version: Version1, Length: 1, PacketNumberLen: 1})
	valid = append(valid, 0)
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), valid...)) }
	cases := map[string]struct {
		b    []byte
		want error
	}{
		"short header":      {mutate(func(b []byte) []byte { b[0] &^= 0x80; return b }), ErrInvalidHeader},
		"fixed bit zero":    {mutate(func(b []byte) []byte { b[0] &^= 0x40; return b }), ErrInvalidHeader},
		"unknown version":   {mutate(func(b []byte) []byte { b[4] = 9; return b }), ErrUnsupportedVersion},
		"negotiation":       {mutate(func(b []byte) []byte { b[4] = 0; return b }), ErrInvalidHeader},
		"dcid of 21 bytes":  {append(append([]byte{0xe0, 0, 0, 0, 1, 21}, make([]byte, 21)...), 0, 1, 0), ErrConnectionIDLen},
		"length zero":       {[]byte{0xe0, 0, 0, 0, 1, 0, 0, 0}, ErrInvalidHeader},
		"length past end":   {[]byte{0xe0, 0, 0, 0, 1, 0, 0, 2, 0}, ErrTruncated},
		"retry without tok": {append([]byte{0xf0, 0, 0, 0, 1, 0, 0}, make([]byte, 16)...), ErrInvalidHeader},
	}
	for name, tc := range cases {
		if _, _, err := ParseLongHeader(tc.b); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", name, err, tc.want)
		}
	}
	appendCases := map[string]LongHeader{
		"bad version":       {Type: PacketTypeInitial, Version: 7, Length: 1, PacketNumberLen: 1},
		"1-RTT type":        {Type: PacketType1RTT, Version: Version1, Length: 1, PacketNumberLen: 1},
		"token in 0-RTT":    {Type: PacketType0RTT, Version: Version1, Token: []byte{1}, Length: 1, PacketNumberLen: 1},
		"empty retry token": {Type: PacketTypeRetry, Version: Version1},
		"pn length 5":       {Type: PacketTypeHandshake, Version: Version1, Length: 9, PacketNumberLen: 5},
		"length below pn":   {Type: PacketTypeHandshake, Version: Version1, Length: 1, PacketNumberLen: 2},
		"length too wide":   {Type: PacketTypeHandshake, Version: Version1, Length: 64, LengthLen: 1, PacketNumberLen: 1},
		"pn above 2^62":     {Type: PacketTypeHandshake, Version: Version1, Length: 4, PacketNumber: 1 << 62, PacketNumberLen: 4},
	}
	for name, h := range appendCases {
		if b, err := AppendLongHeader([]byte{1}, &h); err == nil || len(b) != 1 {
			t.Errorf("%s: AppendLongHeader = %x, %v; want an error and no bytes", name, b, err)
		}
	}
	if _, err := NewConnectionID(make([]byte, 21)); !errors.Is(err, ErrConnectionIDLen) {
		t.Errorf("NewConnectionID(21 bytes): err %v", err)
	}
}

func TestShortHeaderRoundTrip(t *testing.T) {
	for _, h := range []ShortHeader{
		{DstConnID: mustConnID(t, bytes.Repeat([]byte{3}, 20)), SpinBit: true, KeyPhase: true, PacketNumber: 0x1234, PacketNumberLen: 2},
		{PacketNumber: 9, PacketNumberLen: 1},
		{DstConnID: mustConnID(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}), PacketNumber: 0xdeadbeef, PacketNumberLen: 4},
	} {
		b, err := AppendShortHeader(nil, &h)
		if err != nil {
			t.Fatal(err)
		}
		first := b[0]
		if IsLongHeader(first) || KeyPhase(first) != h.KeyPhase || CheckReservedBits(first) != nil ||
			PacketNumberLenFromFirstByte(first) != h.PacketNumberLen || HeaderProtectionMask(first) != 0x1f {
			t.Errorf("first byte %#x for %+v", first, h)
		}
		got, pnOffset, err := ParseShortHeader(b, h.DstConnID.Len())
		if err != nil || pnOffset != 1+h.DstConnID.Len() || got.DstConnID != h.DstConnID || got.SpinBit != h.SpinBit {
			t.Errorf("ParseShortHeader = %+v, %d, %v; want %+v", got, pnOffset, err, h)
		}
		if _, _, err := ParseShortHeader(b[:1+h.DstConnID.Len()], h.DstConnID.Len()); !errors.Is(err, ErrTruncated) {
			t.Errorf("header without packet number: err %v", err)
		}
		if n, err := PacketLen(b); err != nil || n != len(b) {
			t.Errorf("PacketLen(1-RTT) = %d, %v", n, err)
		}
	}
	if _, _, err := ParseShortHeader([]byte{0x40, 1, 2}, 21); !errors.Is(err, ErrConnectionIDLen) {
		t.Errorf("21-byte connection ID: err %v", err)
	}
	if _, _, err := ParseShortHeader([]byte{0x00, 1}, 0); !errors.Is(err, ErrInvalidHeader) {
		t.Errorf("fixed bit zero: err %v", err)
	}
	if _, err := AppendShortHeader(nil, &ShortHeader{PacketNumberLen: 0}); !errors.Is(err, ErrPacketNumber) {
		t.Errorf("packet number length 0: err %v", err)
	}
}

func TestReservedBits(t *testing.T) {
	var te *TransportError
	if err := CheckReservedBits(0xc4); !errors.As(err, &te) || te.Code != CodeProtocolViolation {
		t.Errorf("long header reserved bit: err %v", err)
	}
	if err := CheckReservedBits(0x48); !errors.As(err, &te) || te.Code != CodeProtocolViolation {
		t.Errorf("short header reserved bit: err %v", err)
	}
	if err := CheckReservedBits(0xc3); err != nil {
		t.Errorf("clean long header: %v", err)
	}
	if HeaderProtectionMask(0xc0) != 0x0f {
		t.Error("long header protection mask")
	}
}

func TestVersionNegotiation(t *testing.T) {
	vn := VersionNegotiation{
		DstConnID: bytes.Repeat([]byte{1}, 255),
		SrcConnID: []byte{2, 3},
		Versions:  []Version{Version2, Version1, 0x1a2a3a4a},
	}
	b, err := AppendVersionNegotiation(nil, &vn, 0x15)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != 0xd5 {
		t.Errorf("first byte %#x, want 0xd5", b[0])
	}
	got, err := ParseVersionNegotiation(b)
	if err != nil || !reflect.DeepEqual(got, vn) {
		t.Errorf("ParseVersionNegotiation = %+v, %v", got, err)
	}
	if typ, _, _ := PeekPacketType(b); typ != PacketTypeVersionNegotiation {
		t.Errorf("PeekPacketType = %v", typ)
	}
	if !Version(0x1a2a3a4a).IsReserved() || Version1.IsReserved() {
		t.Error("IsReserved")
	}
	if _, err := ParseVersionNegotiation(b[:len(b)-1]); !errors.Is(err, ErrInvalidHeader) {
		t.Errorf("partial version: err %v", err)
	}
	for i := range 2 + 255 + 3 {
		if _, err := ParseVersionNegotiation(b[:i]); err == nil {
			t.Errorf("prefix of %d bytes parsed", i)
		}
	}
	if _, err := AppendVersionNegotiation(nil, &VersionNegotiation{SrcConnID: make([]byte, 256)}, 0); !errors.Is(err, ErrConnectionIDLen) {
		t.Errorf("256-byte connection ID: err %v", err)
	}
	initial, _ := AppendLongHeader(nil, &LongHeader{Type: PacketTypeInitial, Version: Version1, Length: 1, PacketNumberLen: 1})
	if _, err := ParseVersionNegotiation(append(initial, 0)); !errors.Is(err, ErrInvalidHeader) {
		t.Errorf("Initial parsed as version negotiation: err %v", err)
	}
}

// An unknown version's connection IDs may be up to 255 bytes; the server
// reads them to answer with Version Negotiation.
func TestInvariantLongHeader(t *testing.T) {
	b := append([]byte{0xc0, 0xff, 0, 0, 0x1d, 30}, bytes.Repeat([]byte{9}, 30)...)
	b = append(b, 1, 8, 0xaa, 0xbb)
	h, n, err := ParseInvariantLongHeader(b)
	if err != nil || n != len(b)-2 || h.Version != 0xff00001d || len(h.DstConnID) != 30 || !bytes.Equal(h.SrcConnID, []byte{8}) {
		t.Errorf("ParseInvariantLongHeader = %+v, %d, %v", h, n, err)
	}
	if _, _, err := PeekPacketType(b); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("PeekPacketType of unknown version: err %v", err)
	}
	if n, err := PacketLen(b); err != nil || n != len(b) {
		t.Errorf("PacketLen of unknown version = %d, %v", n, err)
	}
}

// RFC 9000 section 12.2: Initial, Handshake and 1-RTT packets coalesced
// in one datagram are split by their Length fields.
func TestPacketLenCoalesced(t *testing.T) {
	cid := mustConnID(t, []byte{1, 2, 3, 4})
	var datagram []byte
	var sizes []int
	for _, h := range []LongHeader{
		{Type: PacketTypeInitial, Version: Version1, DstConnID: cid, Token: []byte{5}, Length: 30, PacketNumberLen: 1},
		{Type: PacketTypeHandshake, Version: Version1, DstConnID: cid, Length: 300, PacketNumberLen: 2},
	} {
		start := len(datagram)
		datagram, _ = AppendLongHeader(datagram, &h)
		datagram = append(datagram, make([]byte, int(h.Length)-h.PacketNumberLen)...)
		sizes = append(sizes, len(datagram)-start)
	}
	short, _ := AppendShortHeader(nil, &ShortHeader{DstConnID: cid, PacketNumberLen: 1})
	datagram = append(datagram, append(short, make([]byte, 40)...)...)
	sizes = append(sizes, len(short)+40)
	rest := datagram
	for i, want := range sizes {
		n, err := PacketLen(rest)
		if err != nil || n != want {
			t.Fatalf("packet %d: PacketLen = %d, %v; want %d", i, n, err, want)
		}
		rest = rest[n:]
	}
	if _, err := PacketLen(nil); !errors.Is(err, ErrTruncated) {
		t.Errorf("empty datagram: err %v", err)
	}
	if _, err := PacketLen(datagram[:20]); !errors.Is(err, ErrTruncated) {
		t.Errorf("cut Initial: err %v", err)
	}
}
