package fec

import (
	"bytes"
	"errors"
	"testing"
)

func TestCodingCoefficientVectors(t *testing.T) {
	cases := []struct {
		key  uint16
		dt   uint8
		want []byte
	}{
		{key: 1, dt: 15, want: []byte{37, 225, 177, 176, 21, 246, 54, 139}},
		{key: 0, dt: 15, want: []byte{39, 42, 153, 208, 176, 219, 77, 72}},
		{key: 1, dt: 7, want: []byte{225, 176, 246, 139, 0, 0, 187, 0}},
	}
	for _, c := range cases {
		got := make([]byte, len(c.want))
		if err := GenerateCodingCoefficients(c.key, got, c.dt, 8); err != nil {
			t.Fatalf("key %d DT %d: %v", c.key, c.dt, err)
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("key %d DT %d: got %v, want %v", c.key, c.dt, got, c.want)
		}
	}
}

// DT = 15 over GF(2^8) redraws zeros: with seed 1 the draws are the
// rand256 reference sequence, none of them zero, so the coefficients are
// that sequence itself.
func TestCodingCoefficientsDenseFollowRand256(t *testing.T) {
	got := make([]byte, len(tinyMTSeed1Rand256))
	if err := GenerateCodingCoefficients(1, got, 15, 8); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, tinyMTSeed1Rand256) {
		t.Fatalf("got %v, want %v", got, tinyMTSeed1Rand256)
	}
}

func TestCodingCoefficientsBinary(t *testing.T) {
	ones := make([]byte, 10)
	if err := GenerateCodingCoefficients(1, ones, 15, 1); err != nil {
		t.Fatal(err)
	}
	for i, v := range ones {
		if v != 1 {
			t.Fatalf("m=1 DT=15: coefficient %d is %d, want 1", i, v)
		}
	}
	// With DT = 4, coefficient i is 1 exactly when rand16 draw i <= 4.
	got := make([]byte, len(tinyMTSeed1Rand16))
	if err := GenerateCodingCoefficients(1, got, 4, 1); err != nil {
		t.Fatal(err)
	}
	for i, r := range tinyMTSeed1Rand16 {
		want := byte(0)
		if r <= 4 {
			want = 1
		}
		if got[i] != want {
			t.Fatalf("m=1 DT=4: coefficient %d is %d, want %d (rand16 %d)", i, got[i], want, r)
		}
	}
}

func TestCodingCoefficientsErrors(t *testing.T) {
	cc := []byte{7, 7}
	if err := GenerateCodingCoefficients(1, cc, 16, 8); !errors.Is(err, ErrBadDT) {
		t.Errorf("DT 16: got %v, want ErrBadDT", err)
	}
	for _, m := range []int{0, 2, 4, 16} {
		if err := GenerateCodingCoefficients(1, cc, 15, m); !errors.Is(err, ErrBadFieldSize) {
			t.Errorf("m %d: got %v, want ErrBadFieldSize", m, err)
		}
	}
	if cc[0] != 7 || cc[1] != 7 {
		t.Errorf("a failed call wrote coefficients: %v", cc)
	}
}

// The mean share of non-zero coefficients is (DT+1)/16 (RFC 8681
// section 3.6); dense rows have no zero at all.
func TestCodingCoefficientsDensity(t *testing.T) {
	cc := make([]byte, 4000)
	for dt := uint8(0); dt <= 15; dt++ {
		nonZero := 0
		for key := range uint16(8) {
			if err := GenerateCodingCoefficients(key, cc, dt, 8); err != nil {
				t.Fatal(err)
			}
			for _, v := range cc {
				if v != 0 {
					nonZero++
				}
			}
		}
		share := float64(nonZero) / float64(8*len(cc))
		want := float64(dt+1) / 16
		if share < want-0.02 || share > want+0.02 {
			t.Errorf("DT %d: non-zero share %.3f, want about %.3f", dt, share, want)
		}
		if dt == 15 && nonZero != 8*len(cc) {
			t.Errorf("DT 15: %d zero coefficients", 8*len(cc)-nonZero)
		}
	}
}

// referenceCoefficients is RFC 8681 section 3.6's generation written
// plainly on TinyMT32's exported draws.
func referenceCoefficients(key uint16, n int, dt uint8) []byte {
	prng := NewTinyMT32(uint32(key))
	cc := make([]byte, n)
	nonZero := func() byte {
		for {
			if v := prng.Rand256(); v != 0 {
				return v
			}
		}
	}
	for i := range cc {
		if dt == 15 || prng.Rand16() <= dt {
			cc[i] = nonZero()
		}
	}
	return cc
}

// The codec's unrolled generator agrees with the plain one for every DT
// and many keys and lengths.
func TestGenerateCoefficientsMatchesReference(t *testing.T) {
	for dt := uint8(0); dt <= 15; dt++ {
		for key := 0; key < 1<<16; key += 257 {
			n := 1 + key%300
			got := make([]byte, n)
			generateCoefficients(uint16(key), got, dt)
			if want := referenceCoefficients(uint16(key), n, dt); !bytes.Equal(got, want) {
				t.Fatalf("key %d DT %d n %d: differs from the reference", key, dt, n)
			}
		}
	}
}
