//go:build !purego

package fec

import "github.com/klauspost/reedsolomon"

// klauspostKernel wraps klauspost/reedsolomon's exported single-slice
// kernels (SSSE3 or AVX2 on amd64, NEON on arm64, its own Go elsewhere).
// Its field is ours (0x11D); kernel_test.go checks that table for table.
var klauspostKernel = &kernel{
	name:   "klauspost",
	mulAdd: reedsolomon.LowLevel{}.GalMulSliceXor,
	mul:    reedsolomon.LowLevel{}.GalMulSlice,
	xor:    xorKlauspost,
}

// xorKlauspost uses GalMulSliceXor with c = 1, which the library routes to
// its vectorised slice XOR.
func xorKlauspost(in, out []byte) {
	reedsolomon.LowLevel{}.GalMulSliceXor(1, in, out)
}
