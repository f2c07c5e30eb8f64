package fec

// GF(2^8) arithmetic over the polynomial x^8+x^4+x^3+x^2+1 (0x11D), the
// field of RFC 8681 section 3.7 (and of klauspost/reedsolomon). Addition is
// XOR; multiplication uses log/exp tables built once at init.

const gfPoly = 0x11D

var (
	gfExp [510]byte // gfExp[i] = g^i, doubled so that gfExp[log a + log b] needs no modulo
	gfLog [256]byte // gfLog[a] = i with g^i = a, for a != 0
	// gfMulTable[c] is the multiplication table of the constant c.
	gfMulTable [256][256]byte
)

func init() {
	x := 1
	for i := 0; i < 255; i++ {
		gfExp[i] = byte(x)
		gfExp[i+255] = byte(x)
		gfLog[x] = byte(i)
		x <<= 1
		if x&0x100 != 0 {
			x ^= gfPoly
		}
	}
	for c := 0; c < 256; c++ {
		for v := 0; v < 256; v++ {
			gfMulTable[c][v] = gfMulSlow(byte(c), byte(v))
		}
	}
}

func gfMulSlow(a, b byte) byte {
	if a == 0 || b == 0 {
		return 0
	}
	return gfExp[int(gfLog[a])+int(gfLog[b])]
}

// gfMul returns a*b in GF(2^8).
func gfMul(a, b byte) byte { return gfMulTable[a][b] }

// gfInv returns the multiplicative inverse of a; a must not be zero.
func gfInv(a byte) byte {
	if a == 0 {
		panic("fec: inverse of zero in GF(2^8)")
	}
	return gfExp[255-int(gfLog[a])]
}

// mulAddGeneric sets out[i] ^= c*in[i] for i < len(in); out must be at
// least as long as in. It is the portable reference for the SIMD kernels.
func mulAddGeneric(c byte, in, out []byte) {
	out = out[:len(in)]
	switch c {
	case 0:
		return
	case 1:
		xorGeneric(in, out)
		return
	}
	t := &gfMulTable[c]
	for i, v := range in {
		out[i] ^= t[v]
	}
}

// mulGeneric sets out[i] = c*in[i] for i < len(in).
func mulGeneric(c byte, in, out []byte) {
	out = out[:len(in)]
	t := &gfMulTable[c]
	for i, v := range in {
		out[i] = t[v]
	}
}

// xorGeneric sets out[i] ^= in[i] for i < len(in).
func xorGeneric(in, out []byte) {
	out = out[:len(in)]
	for i, v := range in {
		out[i] ^= v
	}
}
