package fec

import "encoding/binary"

// portableKernel is plain Go for every architecture and for the purego
// build tag: table lookups unrolled eight bytes at a time, and XOR a
// 64-bit word at a time.
var portableKernel = &kernel{
	name:   "portable",
	mulAdd: mulAddPortable,
	mul:    mulPortable,
	xor:    xorPortable,
}

// mulAddPortable sets out[i] ^= c*in[i] for i < len(in).
func mulAddPortable(c byte, in, out []byte) {
	t := &gfMulTable[c]
	out = out[:len(in)]
	for len(in) >= 8 {
		o := out[:8]
		o[0] ^= t[in[0]]
		o[1] ^= t[in[1]]
		o[2] ^= t[in[2]]
		o[3] ^= t[in[3]]
		o[4] ^= t[in[4]]
		o[5] ^= t[in[5]]
		o[6] ^= t[in[6]]
		o[7] ^= t[in[7]]
		in, out = in[8:], out[8:]
	}
	for i, v := range in {
		out[i] ^= t[v]
	}
}

// mulPortable sets out[i] = c*in[i] for i < len(in).
func mulPortable(c byte, in, out []byte) {
	t := &gfMulTable[c]
	out = out[:len(in)]
	for len(in) >= 8 {
		o := out[:8]
		o[0] = t[in[0]]
		o[1] = t[in[1]]
		o[2] = t[in[2]]
		o[3] = t[in[3]]
		o[4] = t[in[4]]
		o[5] = t[in[5]]
		o[6] = t[in[6]]
		o[7] = t[in[7]]
		in, out = in[8:], out[8:]
	}
	for i, v := range in {
		out[i] = t[v]
	}
}

// xorPortable sets out[i] ^= in[i] for i < len(in). encoding/binary's
// fixed-order accessors compile to single word loads and stores where the
// architecture allows unaligned access.
func xorPortable(in, out []byte) {
	out = out[:len(in)]
	for len(in) >= 32 {
		o := out[:32]
		binary.LittleEndian.PutUint64(o[0:], binary.LittleEndian.Uint64(o[0:])^binary.LittleEndian.Uint64(in[0:]))
		binary.LittleEndian.PutUint64(o[8:], binary.LittleEndian.Uint64(o[8:])^binary.LittleEndian.Uint64(in[8:]))
		binary.LittleEndian.PutUint64(o[16:], binary.LittleEndian.Uint64(o[16:])^binary.LittleEndian.Uint64(in[16:]))
		binary.LittleEndian.PutUint64(o[24:], binary.LittleEndian.Uint64(o[24:])^binary.LittleEndian.Uint64(in[24:]))
		in, out = in[32:], out[32:]
	}
	for len(in) >= 8 {
		binary.LittleEndian.PutUint64(out, binary.LittleEndian.Uint64(out)^binary.LittleEndian.Uint64(in))
		in, out = in[8:], out[8:]
	}
	for i, v := range in {
		out[i] ^= v
	}
}
