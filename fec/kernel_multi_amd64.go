//go:build amd64 && !purego

package fec

// mulAdd4AVX512 sets out[i] ^= sum over k < 4 of cs[k]*ins[k][i] for
// i < len(out); every ins[k] must hold at least len(out) bytes.
//
//go:noescape
func mulAdd4AVX512(tables *[256][32]byte, cs *[4]byte, ins *[4][]byte, out []byte)

// mulAdd8AVX512 is mulAdd4AVX512 for eight inputs.
//
//go:noescape
func mulAdd8AVX512(tables *[256][32]byte, cs *[8]byte, ins *[8][]byte, out []byte)

// multiBatch gathers up to eight inputs with non-zero coefficients for
// one fused pass over out.
type multiBatch struct {
	cs  [8]byte
	ins [8][]byte
	n   int
}

// mulAddSlicesAVX512 folds the inputs into out eight at a time, then four,
// then one by one; inputs with coefficient 0 or no bytes are skipped.
func mulAddSlicesAVX512(cs []byte, ins [][]byte, out []byte) {
	for _, in := range ins {
		raceReadBytes(in)
	}
	raceWriteBytes(out)
	var batch multiBatch
	for k, in := range ins {
		if cs[k] == 0 || len(in) == 0 {
			continue
		}
		batch.cs[batch.n], batch.ins[batch.n] = cs[k], in
		batch.n++
		if batch.n == len(batch.ins) {
			batch.flush(out)
		}
	}
	batch.flush(out)
}

// flush adds every gathered input into out and empties the batch.
func (b *multiBatch) flush(out []byte) {
	done := 0
	if b.n == 8 {
		n := shortestInput(b.ins[:8])
		mulAdd8AVX512(gfNibbleTables, (*[8]byte)(b.cs[:8]), (*[8][]byte)(b.ins[:8]), out[:n])
		b.finishTails(0, 8, n, out)
		done = 8
	}
	if b.n-done >= 4 {
		n := shortestInput(b.ins[done : done+4])
		mulAdd4AVX512(gfNibbleTables, (*[4]byte)(b.cs[done:done+4]), (*[4][]byte)(b.ins[done:done+4]), out[:n])
		b.finishTails(done, done+4, n, out)
		done += 4
	}
	for k := done; k < b.n; k++ {
		mulAddSliceAVX512(b.cs[k], b.ins[k], out)
	}
	clear(b.ins[:b.n])
	b.n = 0
}

// finishTails adds the bytes past the first n of inputs from..to-1, which
// the fused kernel left out because a shorter input ended there.
func (b *multiBatch) finishTails(from, to, n int, out []byte) {
	for k := from; k < to; k++ {
		if len(b.ins[k]) > n {
			mulAddSliceAVX512(b.cs[k], b.ins[k][n:], out[n:])
		}
	}
}

func shortestInput(ins [][]byte) int {
	n := len(ins[0])
	for _, in := range ins[1:] {
		n = min(n, len(in))
	}
	return n
}
