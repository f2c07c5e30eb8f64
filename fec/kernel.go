package fec

import "fmt"

// Region kernels: the byte-wise GF(2^8) loops that dominate both repair
// generation (RFC 8681 section 3.5: repair = sum of cc[j] * src[j]) and
// decoding (Gaussian elimination over received symbols).
//
// Several implementations exist (see kernels); one is chosen once at init
// from the CPU's features and every exported function below runs on it.

// kernel is one implementation of the region operations. Each function
// requires len(out) >= len(in) and touches only out[:len(in)]; each must
// accept every c in 0..255 (the exported wrappers short-cut 0 and 1, the
// kernels must not rely on it).
type kernel struct {
	name string
	// mulAdd sets out[i] ^= c*in[i].
	mulAdd func(c byte, in, out []byte)
	// mul sets out[i] = c*in[i].
	mul func(c byte, in, out []byte)
	// xor sets out[i] ^= in[i].
	xor func(in, out []byte)
	// mulAddMulti sets out[i] ^= sum over k of cs[k]*ins[k][i], for
	// i < len(ins[k]); nil means the kernel has no fused version and
	// mulAdd is called once per input.
	mulAddMulti func(cs []byte, ins [][]byte, out []byte)
}

// kernels lists every kernel this build can run on this CPU, fastest
// first; tests iterate over all of them. activeKernel is kernels[0].
var (
	kernels      = availableKernels()
	activeKernel = kernels[0]
)

// availableKernels returns the architecture's SIMD kernels (none with the
// purego build tag) followed by the portable one, which always works.
func availableKernels() []*kernel {
	return append(archKernels(), portableKernel)
}

// KernelName reports which region kernel the exported functions use, for
// logs and benchmark reports.
func KernelName() string { return activeKernel.name }

// MulAddSlice sets out[i] ^= c*in[i] in GF(2^8) for every i < len(in). It
// panics if out is shorter than in. This is the inner loop of both repair
// generation and decoding; it runs on the fastest kernel the CPU supports.
func MulAddSlice(c byte, in, out []byte) {
	if len(out) < len(in) {
		panic("fec: MulAddSlice output shorter than input")
	}
	switch c {
	case 0:
	case 1:
		activeKernel.xor(in, out)
	default:
		activeKernel.mulAdd(c, in, out)
	}
}

// MulSlice sets out[i] = c*in[i] in GF(2^8) for every i < len(in). It panics
// if out is shorter than in.
func MulSlice(c byte, in, out []byte) {
	if len(out) < len(in) {
		panic("fec: MulSlice output shorter than input")
	}
	switch c {
	case 0:
		clear(out[:len(in)])
	case 1:
		copy(out, in)
	default:
		activeKernel.mul(c, in, out)
	}
}

// XorSlice sets out[i] ^= in[i] for every i < len(in). It panics if out is
// shorter than in.
func XorSlice(in, out []byte) {
	if len(out) < len(in) {
		panic("fec: XorSlice output shorter than input")
	}
	activeKernel.xor(in, out)
}

// MulAddSlices sets out[i] ^= cs[0]*ins[0][i] ^ cs[1]*ins[1][i] ^ ... in
// GF(2^8); input k contributes to out[:len(ins[k])], so inputs may differ in
// length. It gives the same result as one MulAddSlice per input, but the
// SIMD kernels fold several inputs into each pass over out, saving loads and
// stores. It panics if len(cs) != len(ins) or an input is longer than out.
func MulAddSlices(cs []byte, ins [][]byte, out []byte) {
	if len(cs) != len(ins) {
		panic(fmt.Sprintf("fec: MulAddSlices has %d coefficients for %d inputs", len(cs), len(ins)))
	}
	for k, in := range ins {
		if len(in) > len(out) {
			panic(fmt.Sprintf("fec: MulAddSlices input %d (%d bytes) longer than output (%d bytes)", k, len(in), len(out)))
		}
	}
	if activeKernel.mulAddMulti != nil {
		activeKernel.mulAddMulti(cs, ins, out)
		return
	}
	for k, in := range ins {
		MulAddSlice(cs[k], in, out)
	}
}
