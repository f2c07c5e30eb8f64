package fec

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math/rand/v2"
	"testing"
	"time"
)

var kernelSeed = flag.Uint64("fec.kernelseed", 0, "seed for the randomized kernel tests (0: pick one from the clock)")

// newKernelRand returns a seeded source and logs the seed if the test
// fails, so that `go test -fec.kernelseed=N` replays it.
func newKernelRand(t testing.TB) *rand.Rand {
	seed := *kernelSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replay with -fec.kernelseed=%d", seed)
		}
	})
	return rand.New(rand.NewPCG(seed, 0x5a71c))
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n+7)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b[:n:n]
}

// kernelCase is one (length, constant) pair a kernel is checked at.
type kernelCase struct {
	n int
	c byte
}

// kernelCases returns lengths 0..300 (every tail shape of the 32- and
// 64-byte paths and of the 128- and 256-byte unrolled loops) with every
// constant, then a few large, odd lengths with a sample of constants.
// Under the much slower race detector the small lengths get the sample too.
func kernelCases(r *rand.Rand) []kernelCase {
	all := make([]byte, 256)
	for c := range all {
		all[c] = byte(c)
	}
	sample := []byte{0, 1, 2, 3, 0x80, 0x8e, 0xfe, 0xff, byte(r.Uint32()), byte(r.Uint32())}
	small := all
	if raceEnabled {
		small = sample
	}
	var cases []kernelCase
	for n := 0; n <= 300; n++ {
		for _, c := range small {
			cases = append(cases, kernelCase{n, c})
		}
	}
	for _, n := range kernelLargeLengths {
		for _, c := range sample {
			cases = append(cases, kernelCase{n, c})
		}
	}
	return cases
}

// kernelLargeLengths are symbol and buffer sizes past the unrolled loops,
// none a multiple of 32.
var kernelLargeLengths = []int{1200 + 3, 1500, 4096 + 17, 9000 + 1, 65536 + 33}

// region is one kernel call's operands, placed at unaligned offsets inside
// larger buffers so that the test can see bytes written outside
// out[:len(in)].
type region struct {
	inBuf, outBuf []byte
	in, out       []byte
	wantBuf       []byte // expected outBuf after the call
}

const regionGuard = 67 // bytes of out past len(in), and before out

func newRegion(r *rand.Rand, n int) *region {
	inOff, outOff := r.IntN(64), r.IntN(64)
	g := &region{
		inBuf:  randomBytes(r, inOff+n),
		outBuf: randomBytes(r, outOff+n+regionGuard),
	}
	g.in = g.inBuf[inOff:]
	// out is longer than in: the bytes past len(in) must stay untouched.
	g.out = g.outBuf[outOff:]
	g.wantBuf = bytes.Clone(g.outBuf)
	return g
}

// wantOut returns the expected part of wantBuf matching out.
func (g *region) wantOut() []byte { return g.wantBuf[len(g.outBuf)-len(g.out):] }

func (g *region) check(t *testing.T, what string) {
	t.Helper()
	if !bytes.Equal(g.outBuf, g.wantBuf) {
		i := 0
		for g.outBuf[i] == g.wantBuf[i] {
			i++
		}
		t.Fatalf("%s (len %d): output buffer differs first at byte %d of %d: got %#x, want %#x",
			what, len(g.in), i, len(g.outBuf), g.outBuf[i], g.wantBuf[i])
	}
}

func TestKernelsAvailable(t *testing.T) {
	if len(kernels) == 0 || kernels[len(kernels)-1] != portableKernel {
		t.Fatal("the portable kernel must close the kernel list")
	}
	if activeKernel != kernels[0] {
		t.Fatalf("active kernel %q is not the first of the list", activeKernel.name)
	}
	names := make([]string, len(kernels))
	for i, k := range kernels {
		names[i] = k.name
	}
	t.Logf("kernels: %v, active: %s", names, KernelName())
}

// TestKernelMulAdd compares every kernel with the reference loop (see
// kernelCases for the lengths and constants).
func TestKernelMulAdd(t *testing.T) {
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			r := newKernelRand(t)
			for _, kc := range kernelCases(r) {
				g := newRegion(r, kc.n)
				mulAddGeneric(kc.c, g.in, g.wantOut())
				k.mulAdd(kc.c, g.in, g.out)
				g.check(t, "mulAdd by "+hexByte(int(kc.c)))
			}
		})
	}
}

func TestKernelMul(t *testing.T) {
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			r := newKernelRand(t)
			for _, kc := range kernelCases(r) {
				g := newRegion(r, kc.n)
				mulGeneric(kc.c, g.in, g.wantOut())
				k.mul(kc.c, g.in, g.out)
				g.check(t, "mul by "+hexByte(int(kc.c)))
			}
		})
	}
}

func TestKernelXor(t *testing.T) {
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			r := newKernelRand(t)
			for n := 0; n <= 300; n++ {
				for range 4 {
					g := newRegion(r, n)
					xorGeneric(g.in, g.wantOut())
					k.xor(g.in, g.out)
					g.check(t, "xor")
				}
			}
			for _, n := range kernelLargeLengths {
				g := newRegion(r, n)
				xorGeneric(g.in, g.wantOut())
				k.xor(g.in, g.out)
				g.check(t, "xor")
			}
		})
	}
}

// TestKernelInPlace checks out ^= c*out and out = c*out with in and out
// the same slice, as decoders do when scaling a row.
func TestKernelInPlace(t *testing.T) {
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			r := newKernelRand(t)
			for _, n := range []int{1, 63, 64, 65, 300, 1500} {
				c := byte(2 + r.IntN(254))
				buf := randomBytes(r, n)
				want := make([]byte, n)
				mulGeneric(c, buf, want)
				k.mul(c, buf, buf)
				if !bytes.Equal(buf, want) {
					t.Fatalf("in-place mul by %#x, len %d, differs", c, n)
				}
				mulAddGeneric(c, buf, want)
				k.mulAdd(c, buf, buf)
				if !bytes.Equal(buf, want) {
					t.Fatalf("in-place mulAdd by %#x, len %d, differs", c, n)
				}
			}
		})
	}
}

// TestKernelMulAddMulti checks the fused multi-input kernels against one
// reference call per input, with random counts, lengths and coefficients
// (0 and 1 included).
func TestKernelMulAddMulti(t *testing.T) {
	for _, k := range kernels {
		if k.mulAddMulti == nil {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			r := newKernelRand(t)
			for trial := 0; trial < 3000; trial++ {
				n := r.IntN(600)
				if trial%100 == 0 {
					n = 9000 + r.IntN(100)
				}
				count := r.IntN(20)
				cs, ins := randomInputs(r, count, n)
				g := newRegion(r, n)
				for j, in := range ins {
					mulAddGeneric(cs[j], in, g.wantOut())
				}
				k.mulAddMulti(cs, ins, g.out)
				g.check(t, "mulAddMulti")
			}
		})
	}
}

// randomInputs returns count inputs no longer than n, mostly of length n,
// with coefficients biased towards the special values 0 and 1.
func randomInputs(r *rand.Rand, count, n int) ([]byte, [][]byte) {
	cs := make([]byte, count)
	ins := make([][]byte, count)
	for j := range ins {
		m := n
		if r.IntN(3) == 0 {
			m = r.IntN(n + 1)
		}
		off := r.IntN(8)
		ins[j] = randomBytes(r, off+m)[off:]
		switch r.IntN(10) {
		case 0:
			cs[j] = 0
		case 1:
			cs[j] = 1
		default:
			cs[j] = byte(r.Uint32())
		}
	}
	return cs, ins
}

// TestExportedFunctions checks the exported wrappers (which short-cut c = 0
// and c = 1) on the active kernel.
func TestExportedFunctions(t *testing.T) {
	r := newKernelRand(t)
	for _, n := range []int{0, 1, 31, 64, 100, 1500} {
		for _, c := range []byte{0, 1, 2, 0x8e, 0xff} {
			g := newRegion(r, n)
			mulAddGeneric(c, g.in, g.wantOut())
			MulAddSlice(c, g.in, g.out)
			g.check(t, "MulAddSlice by "+hexByte(int(c)))

			g = newRegion(r, n)
			mulGeneric(c, g.in, g.wantOut())
			MulSlice(c, g.in, g.out)
			g.check(t, "MulSlice by "+hexByte(int(c)))
		}
		g := newRegion(r, n)
		xorGeneric(g.in, g.wantOut())
		XorSlice(g.in, g.out)
		g.check(t, "XorSlice")

		cs, ins := randomInputs(r, 11, n)
		g = newRegion(r, n)
		for j, in := range ins {
			mulAddGeneric(cs[j], in, g.wantOut())
		}
		MulAddSlices(cs, ins, g.out)
		g.check(t, "MulAddSlices")
	}
}

func TestExportedFunctionsPanicOnShortOutput(t *testing.T) {
	in, out := make([]byte, 10), make([]byte, 9)
	calls := map[string]func(){
		"MulAddSlice":           func() { MulAddSlice(3, in, out) },
		"MulSlice":              func() { MulSlice(3, in, out) },
		"XorSlice":              func() { XorSlice(in, out) },
		"MulAddSlices long":     func() { MulAddSlices([]byte{3}, [][]byte{in}, out) },
		"MulAddSlices mismatch": func() { MulAddSlices([]byte{3, 4}, [][]byte{out}, out) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			call()
		})
	}
}

func hexByte(c int) string {
	const digits = "0123456789abcdef"
	return "0x" + string(digits[c>>4]) + string(digits[c&15])
}

// FuzzMulAddSlice checks the active kernel against the reference on
// arbitrary data, constants and in/out offsets.
func FuzzMulAddSlice(f *testing.F) {
	f.Add(byte(0x8e), uint8(3), []byte("satellite links lose packets in bursts"))
	f.Add(byte(1), uint8(0), make([]byte, 130))
	f.Fuzz(func(t *testing.T, c byte, shift uint8, data []byte) {
		in := data[min(int(shift)%64, len(data)):]
		out := make([]byte, len(in)+int(shift)%7)
		for i := range out {
			out[i] = byte(i * 37)
		}
		want := bytes.Clone(out)
		mulAddGeneric(c, in, want)
		MulAddSlice(c, in, out)
		if !bytes.Equal(out, want) {
			t.Fatalf("MulAddSlice by %#x over %d bytes differs from the reference", c, len(in))
		}
		mulGeneric(c, in, want)
		MulSlice(c, in, out)
		if !bytes.Equal(out, want) {
			t.Fatalf("MulSlice by %#x over %d bytes differs from the reference", c, len(in))
		}
	})
}
