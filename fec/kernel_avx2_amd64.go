//go:build amd64 && !purego

package fec

// avx2Kernel is our own AVX2 kernel (kernel_avx2_amd64.s) for CPUs
// without AVX-512BW: nibble-table VPSHUFB on 32-byte registers, four
// blocks per loop iteration, and the last partial block redone as an
// overlapping, masked 32-byte window. Regions shorter than one window go
// to the portable code. The fused variant (kernel_multi_avx2_amd64.go)
// adds four inputs in one pass over out.
var avx2Kernel = &kernel{
	name:        "avx2",
	mulAdd:      mulAddSliceAVX2,
	mul:         mulSliceAVX2,
	xor:         xorSliceAVX2,
	mulAddMulti: mulAddSlicesAVX2,
}

// avx2Window is the register width of the AVX2 kernels and the shortest
// region they accept.
const avx2Window = 32

// mulAddAVX2 sets out[i] ^= c*in[i] for i < len(in), where tab is
// gfNibbleTables[c]; len(in) >= 32 and out is at least as long as in.
//
//go:noescape
func mulAddAVX2(tab *[32]byte, in, out []byte)

// mulAVX2 sets out[i] = c*in[i] for i < len(in), where tab is
// gfNibbleTables[c]; len(in) >= 32 and out is at least as long as in.
//
//go:noescape
func mulAVX2(tab *[32]byte, in, out []byte)

// xorAVX2 sets out[i] ^= in[i] for i < len(in); len(in) >= 32 and out is
// at least as long as in.
//
//go:noescape
func xorAVX2(in, out []byte)

func mulAddSliceAVX2(c byte, in, out []byte) {
	if len(in) < avx2Window {
		mulAddPortable(c, in, out)
		return
	}
	out = out[:len(in)]
	raceReadBytes(in)
	raceWriteBytes(out)
	mulAddAVX2(&gfNibbleTables[c], in, out)
}

func mulSliceAVX2(c byte, in, out []byte) {
	if len(in) < avx2Window {
		mulPortable(c, in, out)
		return
	}
	out = out[:len(in)]
	raceReadBytes(in)
	raceWriteBytes(out)
	mulAVX2(&gfNibbleTables[c], in, out)
}

func xorSliceAVX2(in, out []byte) {
	if len(in) < avx2Window {
		xorPortable(in, out)
		return
	}
	out = out[:len(in)]
	raceReadBytes(in)
	raceWriteBytes(out)
	xorAVX2(in, out)
}
