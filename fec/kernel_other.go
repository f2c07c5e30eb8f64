//go:build !amd64 && !purego

package fec

// archKernels returns the SIMD kernels for architectures without our own
// assembly: klauspost/reedsolomon's, which carries NEON for arm64 and
// falls back to Go on the rest.
func archKernels() []*kernel { return []*kernel{klauspostKernel} }
