//go:build amd64 && !purego

package fec

// avx512Kernel is our own AVX-512BW kernel (kernel_avx512_amd64.s, and the
// fused multi-input variant in kernel_multi_amd64.s): nibble-table VPSHUFB
// on 64-byte registers, four blocks per loop iteration, and a byte-masked
// final block, so no length needs a Go tail loop.
var avx512Kernel = &kernel{
	name:        "avx512",
	mulAdd:      mulAddSliceAVX512,
	mul:         mulSliceAVX512,
	xor:         xorSliceAVX512,
	mulAddMulti: mulAddSlicesAVX512,
}

// mulAddAVX512 sets out[i] ^= c*in[i] for i < len(in), where tab is
// gfNibbleTables[c]; out must be at least as long as in.
//
//go:noescape
func mulAddAVX512(tab *[32]byte, in, out []byte)

// mulAVX512 sets out[i] = c*in[i] for i < len(in), where tab is
// gfNibbleTables[c]; out must be at least as long as in.
//
//go:noescape
func mulAVX512(tab *[32]byte, in, out []byte)

// xorAVX512 sets out[i] ^= in[i] for i < len(in); out must be at least as
// long as in.
//
//go:noescape
func xorAVX512(in, out []byte)

// The wrappers re-slice out so that a violated length precondition panics
// in Go instead of writing past the end of out.

func mulAddSliceAVX512(c byte, in, out []byte) {
	out = out[:len(in)]
	raceReadBytes(in)
	raceWriteBytes(out)
	mulAddAVX512(&gfNibbleTables[c], in, out)
}

func mulSliceAVX512(c byte, in, out []byte) {
	out = out[:len(in)]
	raceReadBytes(in)
	raceWriteBytes(out)
	mulAVX512(&gfNibbleTables[c], in, out)
}

func xorSliceAVX512(in, out []byte) {
	out = out[:len(in)]
	raceReadBytes(in)
	raceWriteBytes(out)
	xorAVX512(in, out)
}
