package fec

import (
	"testing"

	"github.com/klauspost/reedsolomon"
)

// TestGFMulMatchesBitwise checks the log/exp multiplication tables against
// an independent shift-and-add multiplication for every pair.
func TestGFMulMatchesBitwise(t *testing.T) {
	for a := 0; a < 256; a++ {
		for b := 0; b < 256; b++ {
			want := gfMulBitwise(byte(a), byte(b))
			if got := gfMul(byte(a), byte(b)); got != want {
				t.Fatalf("gfMul(%#x, %#x) = %#x, want %#x", a, b, got, want)
			}
			if got := gfMulSlow(byte(a), byte(b)); got != want {
				t.Fatalf("gfMulSlow(%#x, %#x) = %#x, want %#x", a, b, got, want)
			}
		}
	}
}

// TestGFBitwiseReducesByPolynomial pins gfMulBitwise to 0x11D: x^7 * x is
// x^8 = x^4+x^3+x^2+1, and the RFC 8681 section 3.7 field has 2 as a
// generator.
func TestGFBitwiseReducesByPolynomial(t *testing.T) {
	if got := gfMulBitwise(0x80, 0x02); got != 0x1D {
		t.Fatalf("x^7 * x = %#x, want 0x1d", got)
	}
	if got := gfMulBitwise(0x53, 0xCA); got == 0x01 {
		t.Fatalf("0x53 * 0xCA = 1: that is the AES field (0x11B), not 0x11D")
	}
}

func TestGFCommutativeWithIdentityAndZero(t *testing.T) {
	for a := 0; a < 256; a++ {
		if gfMul(byte(a), 1) != byte(a) || gfMul(byte(a), 0) != 0 {
			t.Fatalf("identity or zero fails for %#x", a)
		}
		for b := 0; b < 256; b++ {
			if gfMul(byte(a), byte(b)) != gfMul(byte(b), byte(a)) {
				t.Fatalf("%#x*%#x is not commutative", a, b)
			}
		}
	}
}

// TestGFAssociativeAndDistributive checks both axioms exhaustively
// (2^24 triples each, a fraction of a second).
func TestGFAssociativeAndDistributive(t *testing.T) {
	for a := 0; a < 256; a++ {
		ta := &gfMulTable[a]
		for b := 0; b < 256; b++ {
			ab := ta[b]
			tab, tb := &gfMulTable[ab], &gfMulTable[b]
			for c := 0; c < 256; c++ {
				if tab[c] != ta[tb[c]] {
					t.Fatalf("(%#x*%#x)*%#x != %#x*(%#x*%#x)", a, b, c, a, b, c)
				}
				if ta[byte(b)^byte(c)] != ab^ta[c] {
					t.Fatalf("%#x*(%#x^%#x) != %#x*%#x ^ %#x*%#x", a, b, c, a, b, a, c)
				}
			}
		}
	}
}

func TestGFInverse(t *testing.T) {
	for a := 1; a < 256; a++ {
		inv := gfInv(byte(a))
		if gfMul(byte(a), inv) != 1 {
			t.Fatalf("%#x * gfInv(%#x)=%#x != 1", a, a, inv)
		}
		if got := reedsolomon.Inv(byte(a)); got != inv {
			t.Fatalf("reedsolomon.Inv(%#x) = %#x, gfInv = %#x", a, got, inv)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("gfInv(0) did not panic")
		}
	}()
	gfInv(0)
}

// TestGFGenerator checks that 2 generates the multiplicative group: its
// powers run through all 255 non-zero elements before returning to 1.
func TestGFGenerator(t *testing.T) {
	var seen [256]bool
	x := byte(1)
	for i := 0; i < 255; i++ {
		if seen[x] || x == 0 {
			t.Fatalf("2^%d = %#x repeats or is zero", i, x)
		}
		seen[x] = true
		if gfExp[i] != x || (i > 0 && int(gfLog[x]) != i) {
			t.Fatalf("exp/log tables disagree at 2^%d = %#x", i, x)
		}
		x = gfMulBitwise(x, 2)
	}
	if x != 1 {
		t.Fatalf("2^255 = %#x, want 1", x)
	}
}

// TestGFMatchesKlauspostField checks that klauspost/reedsolomon multiplies
// in the same field: its GalMulSlice of c over all 256 bytes must equal our
// multiplication table row c.
func TestGFMatchesKlauspostField(t *testing.T) {
	in := make([]byte, 256)
	for i := range in {
		in[i] = byte(i)
	}
	out := make([]byte, 256)
	for c := 0; c < 256; c++ {
		reedsolomon.LowLevel{}.GalMulSlice(byte(c), in, out)
		if string(out) != string(gfMulTable[c][:]) {
			t.Fatalf("klauspost multiplication by %#x differs from gfMulTable", c)
		}
	}
}

func TestNibbleTables(t *testing.T) {
	for c := 0; c < 256; c++ {
		for v := 0; v < 256; v++ {
			got := gfNibbleTables[c][v&15] ^ gfNibbleTables[c][16+v>>4]
			if want := gfMul(byte(c), byte(v)); got != want {
				t.Fatalf("nibble tables give %#x*%#x = %#x, want %#x", c, v, got, want)
			}
		}
	}
}
