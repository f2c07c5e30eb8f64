//go:build purego

package fec

// archKernels returns no SIMD kernel: the purego build tag asks for Go
// code only, so the portable kernel serves everything.
func archKernels() []*kernel { return nil }
