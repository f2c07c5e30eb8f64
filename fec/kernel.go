package fec

// MulAddSlice sets out[i] ^= c*in[i] in GF(2^8) for every i < len(in). It
// panics if out is shorter than in. This is the inner loop of both repair
// generation and decoding; it runs on the fastest kernel the CPU supports.
func MulAddSlice(c byte, in, out []byte) {
	if len(out) < len(in) {
		panic("fec: MulAddSlice output shorter than input")
	}
	mulAddGeneric(c, in, out)
}

// MulSlice sets out[i] = c*in[i] in GF(2^8) for every i < len(in). It panics
// if out is shorter than in.
func MulSlice(c byte, in, out []byte) {
	if len(out) < len(in) {
		panic("fec: MulSlice output shorter than input")
	}
	mulGeneric(c, in, out)
}

// XorSlice sets out[i] ^= in[i] for every i < len(in).
func XorSlice(in, out []byte) {
	if len(out) < len(in) {
		panic("fec: XorSlice output shorter than input")
	}
	xorGeneric(in, out)
}
