package varint

import "testing"

// TestRoundTrip: each length's boundaries encode in the shortest form
// and decode back; RFC 9000 appendix A.1's examples decode.
func TestRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 63, 64, 16383, 16384, 1<<30 - 1, 1 << 30, Max} {
		b := Append(nil, v)
		if len(b) != Len(v) {
			t.Errorf("%d: %d bytes, Len says %d", v, len(b), Len(v))
		}
		if got, n := Parse(b); got != v || n != len(b) {
			t.Errorf("%d: parsed %d from %d bytes", v, got, n)
		}
		if _, n := Parse(b[:len(b)-1]); n != 0 {
			t.Errorf("%d: a truncated encoding parsed as %d bytes", v, n)
		}
	}
	for _, c := range []struct {
		b []byte
		v uint64
	}{
		{[]byte{0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c}, 151288809941952652},
		{[]byte{0x9d, 0x7f, 0x3e, 0x7d}, 494878333},
		{[]byte{0x7b, 0xbd}, 15293},
		{[]byte{0x25}, 37},
		{[]byte{0x40, 0x25}, 37},
	} {
		if v, n := Parse(c.b); v != c.v || n != len(c.b) {
			t.Errorf("% x: %d in %d bytes, want %d", c.b, v, n, c.v)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte{0x25})
	f.Add([]byte{0xc2, 0x19, 0x7c})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n := Parse(b)
		if n == 0 {
			return
		}
		if n > len(b) || v > Max {
			t.Fatalf("% x: %d in %d bytes", b, v, n)
		}
		if w, m := Parse(Append(nil, v)); w != v || m != Len(v) {
			t.Fatalf("%d did not round-trip", v)
		}
	})
}
