package wire

import (
	"encoding/hex"
	"errors"
	"testing"
)

// RFC 9000 appendix A.1 sample encodings.
func TestVarintRFCExamples(t *testing.T) {
	cases := []struct {
		hex  string
		want uint64
	}{
		{"c2197c5eff14e88c", 151288809941952652},
		{"9d7f3e7d", 494878333},
		{"7bbd", 15293},
		{"25", 37},
		{"4025", 37},
	}
	for _, tc := range cases {
		b, _ := hex.DecodeString(tc.hex)
		v, n, err := ParseVarint(b)
		if err != nil || v != tc.want || n != len(b) {
			t.Errorf("ParseVarint(%s) = %d, %d, %v; want %d, %d", tc.hex, v, n, err, tc.want, len(b))
		}
		enc, err := AppendVarintWithLen(nil, tc.want, len(b))
		if err != nil || hex.EncodeToString(enc) != tc.hex {
			t.Errorf("AppendVarintWithLen(%d, %d) = %x, %v; want %s", tc.want, len(b), enc, err, tc.hex)
		}
	}
}

func TestVarintEdges(t *testing.T) {
	cases := []struct {
		v    uint64
		size int
	}{
		{0, 1}, {63, 1}, {64, 2}, {16383, 2}, {16384, 4},
		{1<<30 - 1, 4}, {1 << 30, 8}, {MaxVarint, 8},
	}
	for _, tc := range cases {
		if got := VarintLen(tc.v); got != tc.size {
			t.Errorf("VarintLen(%d) = %d, want %d", tc.v, got, tc.size)
		}
		b, err := AppendVarint([]byte{0xaa}, tc.v)
		if err != nil || len(b) != 1+tc.size || b[0] != 0xaa {
			t.Fatalf("AppendVarint(%d) = %x, %v", tc.v, b, err)
		}
		v, n, err := ParseVarint(b[1:])
		if err != nil || v != tc.v || n != tc.size {
			t.Errorf("round trip of %d: got %d, %d, %v", tc.v, v, n, err)
		}
		for prefix := range tc.size {
			if _, _, err := ParseVarint(b[1 : 1+prefix]); !errors.Is(err, ErrTruncated) {
				t.Errorf("ParseVarint of %d-byte prefix of %d: err %v, want ErrTruncated", prefix, tc.v, err)
			}
		}
	}
}

func TestVarintOutOfRange(t *testing.T) {
	if VarintLen(MaxVarint+1) != 0 {
		t.Error("VarintLen(2^62) should be 0")
	}
	if b, err := AppendVarint([]byte{1}, MaxVarint+1); !errors.Is(err, ErrVarintRange) || len(b) != 1 {
		t.Errorf("AppendVarint(2^62) = %x, %v; want unchanged input and ErrVarintRange", b, err)
	}
	for _, tc := range []struct {
		v uint64
		n int
	}{{64, 1}, {16384, 2}, {1 << 30, 4}, {MaxVarint + 1, 8}, {1, 3}, {1, 0}} {
		if _, err := AppendVarintWithLen(nil, tc.v, tc.n); !errors.Is(err, ErrVarintRange) {
			t.Errorf("AppendVarintWithLen(%d, %d): err %v, want ErrVarintRange", tc.v, tc.n, err)
		}
	}
}

func TestVarintForcedLengths(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8} {
		for _, v := range []uint64{0, 1, 37, varintMaxForLen(n)} {
			b, err := AppendVarintWithLen(nil, v, n)
			if err != nil || len(b) != n {
				t.Fatalf("AppendVarintWithLen(%d, %d) = %x, %v", v, n, b, err)
			}
			got, m, err := ParseVarint(b)
			if err != nil || got != v || m != n {
				t.Errorf("parse of forced %d-byte %d = %d, %d, %v", n, v, got, m, err)
			}
		}
	}
}

func TestPutVarintWithLen(t *testing.T) {
	b := []byte{0xff, 0, 0, 0xee}
	if err := PutVarintWithLen(b[1:3], 1182, 2); err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(b) != "ff449eee" {
		t.Errorf("PutVarintWithLen wrote %x, want ff449eee", b)
	}
	if err := PutVarintWithLen(b[:1], 5, 2); !errors.Is(err, ErrTruncated) {
		t.Errorf("short destination: err %v, want ErrTruncated", err)
	}
	if err := PutVarintWithLen(b, 1<<14, 2); !errors.Is(err, ErrVarintRange) {
		t.Errorf("value too large for 2 bytes: err %v, want ErrVarintRange", err)
	}
}
