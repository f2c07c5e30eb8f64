//go:build amd64 && !purego

package fec

// mulAdd4AVX2 sets out[i] ^= sum over k < 4 of cs[k]*ins[k][i] for
// i < len(out); len(out) >= 32 and every ins[k] holds at least len(out)
// bytes.
//
//go:noescape
func mulAdd4AVX2(tables *[256][32]byte, cs *[4]byte, ins *[4][]byte, out []byte)

// mulAddSlicesAVX2 folds the inputs into out four at a time, each block of
// out loaded and stored once for four inputs rather than once for each,
// then the rest one by one; inputs with coefficient 0 or no bytes are
// skipped. A repair over a window of full-size sources is mostly such
// passes.
func mulAddSlicesAVX2(cs []byte, ins [][]byte, out []byte) {
	for _, in := range ins {
		raceReadBytes(in)
	}
	raceWriteBytes(out)
	var batch [4][]byte
	var bcs [4]byte
	n := 0
	for k, in := range ins {
		if cs[k] == 0 || len(in) == 0 {
			continue
		}
		bcs[n], batch[n] = cs[k], in
		n++
		if n == len(batch) {
			flush4AVX2(&bcs, &batch, out)
			n = 0
		}
	}
	for k := range n {
		mulAddSliceAVX2(bcs[k], batch[k], out)
	}
	clear(batch[:])
}

// flush4AVX2 adds four inputs into out: their common length in one fused
// pass, what the longer ones have beyond it one by one.
func flush4AVX2(cs *[4]byte, ins *[4][]byte, out []byte) {
	n := shortestInput(ins[:])
	if n < avx2Window {
		for k, in := range ins {
			mulAddSliceAVX2(cs[k], in, out)
		}
		return
	}
	mulAdd4AVX2(gfNibbleTables, cs, ins, out[:n])
	for k, in := range ins {
		if len(in) > n {
			mulAddSliceAVX2(cs[k], in[n:], out[n:])
		}
	}
}
