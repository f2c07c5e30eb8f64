package wire

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// RFC 9000 appendix A.2: sending 0xac5c02 with 0xabe8b3 acknowledged needs
// 16 bits; sending 0xace8fe needs 24 bits.
func TestPacketNumberLenRFCExample(t *testing.T) {
	for _, tc := range []struct {
		pn, acked uint64
		want      int
	}{
		{0xac5c02, 0xabe8b3, 2},
		{0xace8fe, 0xabe8b3, 3},
		{0, InvalidPacketNumber, 1},
		{127, InvalidPacketNumber, 1},
		{128, InvalidPacketNumber, 2},
		{128, 0, 1},
		{129, 0, 2},
		{1<<31 + 5, 5, 4},
	} {
		got, err := PacketNumberLen(tc.pn, tc.acked)
		if err != nil || got != tc.want {
			t.Errorf("PacketNumberLen(%#x, %#x) = %d, %v; want %d", tc.pn, tc.acked, got, err, tc.want)
		}
	}
}

func TestPacketNumberLenErrors(t *testing.T) {
	for _, tc := range []struct{ pn, acked uint64 }{
		{5, 5}, {4, 5}, {1<<31 + 6, 5}, {MaxPacketNumber + 1, InvalidPacketNumber},
	} {
		if _, err := PacketNumberLen(tc.pn, tc.acked); !errors.Is(err, ErrPacketNumber) {
			t.Errorf("PacketNumberLen(%d, %d): err %v, want ErrPacketNumber", tc.pn, tc.acked, err)
		}
	}
}

// RFC 9000 appendix A.3: 0x9b32 on 16 bits after 0xa82f30ea is 0xa82f9b32.
func TestDecodePacketNumberRFCExample(t *testing.T) {
	got, err := DecodePacketNumber(0xa82f30ea, 0x9b32, 2)
	if err != nil || got != 0xa82f9b32 {
		t.Errorf("DecodePacketNumber = %#x, %v; want 0xa82f9b32", got, err)
	}
}

func TestDecodePacketNumberEdges(t *testing.T) {
	for _, tc := range []struct {
		largest, truncated uint64
		pnLen              int
		want               uint64
	}{
		{InvalidPacketNumber, 0, 1, 0},
		{InvalidPacketNumber, 5, 1, 5},
		{0xff, 0x00, 1, 0x100},  // wraps forward
		{0x100, 0xff, 1, 0xff},  // just below
		{0x17f, 0x00, 1, 0x200}, // closer to the next window
		{0x180, 0x7f, 1, 0x17f}, // hwin boundary
		{10, 0xfe, 1, 0xfe},     // cannot go below zero
		{MaxPacketNumber - 1, 0xff, 1, MaxPacketNumber},
		{MaxPacketNumber - 1, 0x00, 1, MaxPacketNumber - 0xff}, // no window above 2^62
	} {
		got, err := DecodePacketNumber(tc.largest, tc.truncated, tc.pnLen)
		if err != nil || got != tc.want {
			t.Errorf("DecodePacketNumber(%#x, %#x, %d) = %#x, %v; want %#x", tc.largest, tc.truncated, tc.pnLen, got, err, tc.want)
		}
	}
	if _, err := DecodePacketNumber(0, 0x100, 1); !errors.Is(err, ErrPacketNumber) {
		t.Errorf("truncated value wider than its length: err %v", err)
	}
	if _, err := DecodePacketNumber(0, 0, 5); !errors.Is(err, ErrPacketNumber) {
		t.Errorf("length 5: err %v", err)
	}
}

// A packet number encoded with PacketNumberLen against the largest
// acknowledged decodes to itself at any receiver whose largest received
// lies between the largest acknowledged and the packet number.
func TestPacketNumberEncodeDecodeRandom(t *testing.T) {
	seed := uint64(20250101)
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := range 100000 {
		acked := rng.Uint64N(1 << 40)
		pn := acked + 1 + rng.Uint64N(1<<uint(rng.IntN(31)))
		n, err := PacketNumberLen(pn, acked)
		if err != nil {
			t.Fatalf("seed %d case %d: PacketNumberLen(%d, %d): %v", seed, i, pn, acked, err)
		}
		received := acked + rng.Uint64N(pn-acked)
		b, err := AppendPacketNumber(nil, pn, n)
		if err != nil {
			t.Fatal(err)
		}
		trunc, _, err := ParsePacketNumber(b, n)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodePacketNumber(received, trunc, n)
		if err != nil || got != pn {
			t.Fatalf("seed %d case %d: pn %d acked %d received %d len %d decoded %d, %v", seed, i, pn, acked, received, n, got, err)
		}
	}
}

func TestPacketNumberAppendParse(t *testing.T) {
	b, err := AppendPacketNumber(nil, 0x0102030405, 4)
	if err != nil || string(b) != "\x02\x03\x04\x05" {
		t.Errorf("AppendPacketNumber = %x, %v", b, err)
	}
	if _, err := AppendPacketNumber(nil, 1, 0); !errors.Is(err, ErrPacketNumber) {
		t.Errorf("length 0: err %v", err)
	}
	if _, _, err := ParsePacketNumber(b[:3], 4); !errors.Is(err, ErrTruncated) {
		t.Errorf("short packet number: err %v", err)
	}
}
