package fec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchSizes are symbol sizes of interest: tiny, small, the usual QUIC
// datagram payloads (1200, 1500), a page-ish 2048 and a jumbo frame.
var benchSizes = []int{64, 256, 1200, 1500, 2048, 9000}

// BenchmarkMulAdd measures out ^= c*in per kernel and size; -benchtime
// small keeps the whole matrix short. MB/s is of input bytes.
func BenchmarkMulAdd(b *testing.B) {
	for _, k := range kernels {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				in, out := randomBytes(r, n), randomBytes(r, n)
				b.SetBytes(int64(n))
				for b.Loop() {
					k.mulAdd(0x8e, in, out)
				}
			})
		}
	}
}

func BenchmarkMul(b *testing.B) {
	for _, k := range kernels {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				in, out := randomBytes(r, n), randomBytes(r, n)
				b.SetBytes(int64(n))
				for b.Loop() {
					k.mul(0x8e, in, out)
				}
			})
		}
	}
}

func BenchmarkXor(b *testing.B) {
	for _, k := range kernels {
		for _, n := range benchSizes {
			b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				in, out := randomBytes(r, n), randomBytes(r, n)
				b.SetBytes(int64(n))
				for b.Loop() {
					k.xor(in, out)
				}
			})
		}
	}
}

// BenchmarkMulAddSlices measures a repair-like sum of 16 inputs into one
// output, fused (MulAddSlices on the kernel's multi-input path) against one
// mulAdd call per input. MB/s is of input bytes.
func BenchmarkMulAddSlices(b *testing.B) {
	const inputs = 16
	for _, k := range kernels {
		for _, n := range []int{256, 1200, 1500, 9000} {
			r := rand.New(rand.NewPCG(3, 4))
			cs, ins := make([]byte, inputs), make([][]byte, inputs)
			for j := range ins {
				cs[j] = byte(2 + r.IntN(254))
				ins[j] = randomBytes(r, n)
			}
			out := randomBytes(r, n)
			b.Run(fmt.Sprintf("%s/single/%dx%d", k.name, inputs, n), func(b *testing.B) {
				b.SetBytes(int64(n * inputs))
				for b.Loop() {
					for j, in := range ins {
						k.mulAdd(cs[j], in, out)
					}
				}
			})
			if k.mulAddMulti == nil {
				continue
			}
			b.Run(fmt.Sprintf("%s/fused/%dx%d", k.name, inputs, n), func(b *testing.B) {
				b.SetBytes(int64(n * inputs))
				for b.Loop() {
					k.mulAddMulti(cs, ins, out)
				}
			})
		}
	}
}
