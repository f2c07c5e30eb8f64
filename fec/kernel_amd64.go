//go:build amd64 && !purego

package fec

import "golang.org/x/sys/cpu"

// hasAVX512BW reports whether the CPU and OS support the AVX-512 subsets
// the AVX-512 kernels use (F for the 512-bit ops, BW for byte shuffles,
// byte masks and VPBROADCASTB from a general register).
var hasAVX512BW = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// archKernels returns the amd64 SIMD kernels this CPU supports, fastest
// first.
func archKernels() []*kernel {
	var ks []*kernel
	if hasAVX512BW {
		ks = append(ks, avx512Kernel)
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, klauspostKernel)
}
