package inetsum

import (
	"encoding/binary"
	"testing"
)

// naive is RFC 1071's checksum word by word with carries folded at once.
func naive(b []byte) uint16 {
	var sum uint32
	for i := 0; i < len(b); i += 2 {
		w := uint32(b[i]) << 8
		if i+1 < len(b) {
			w |= uint32(b[i+1])
		}
		sum += w
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// TestRFC1071Example: the worked example of RFC 1071 section 3, whose
// sum is ddf2.
func TestRFC1071Example(t *testing.T) {
	b := []byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}
	if got := Fold(Sum(0, b)); got != 0xddf2 {
		t.Fatalf("sum %04x, want ddf2", got)
	}
}

// TestChecksumVerifies: a checksum written into the data makes the
// checksum of the whole 0.
func TestChecksumVerifies(t *testing.T) {
	b := []byte{0x45, 0, 0, 0x54, 0x12, 0x34, 0x40, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}
	binary.BigEndian.PutUint16(b[10:], Checksum(0, b))
	if got := Checksum(0, b); got != 0 {
		t.Fatalf("checksum over a correct header %04x, want 0", got)
	}
}

func FuzzChecksum(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0xff})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Checksum(0, b), naive(b); got != want && !(got == 0 && want == 0xffff || got == 0xffff && want == 0) {
			t.Fatalf("checksum %04x, want %04x", got, want)
		}
	})
}

// TestSumLengths: sums of every length up to a few loops of the wide
// loop, over bytes that carry often, and split at even offsets, agree
// with the word-by-word checksum.
func TestSumLengths(t *testing.T) {
	b := make([]byte, 200)
	for i := range b {
		b[i] = byte(0xff - i%7)
	}
	for n := range len(b) {
		if got, want := Checksum(0, b[:n]), naive(b[:n]); got != want && !(got == 0 && want == 0xffff || got == 0xffff && want == 0) {
			t.Fatalf("%d bytes: checksum %04x, want %04x", n, got, want)
		}
		split := n / 2 &^ 1
		if got, want := Checksum(Sum(0, b[:split]), b[split:n]), naive(b[:n]); got != want && !(got == 0 && want == 0xffff || got == 0xffff && want == 0) {
			t.Fatalf("%d bytes split at %d: checksum %04x, want %04x", n, split, got, want)
		}
	}
}

func BenchmarkSum(b *testing.B) {
	p := make([]byte, 1400)
	for i := range p {
		p[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		_ = Sum(0, p)
	}
}
