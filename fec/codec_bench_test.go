package fec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Benchmarks of the RLC codec on the data path: 1200-byte symbols, as in
// a QUIC packet.
//
//	go test ./fec/ -run '^$' -bench 'RepairGeneration|Decode|CodecProtected' -benchtime 1s

const benchSymbolSize = 1200

func benchPayload(rng *rand.Rand) []byte {
	p := make([]byte, benchSymbolSize)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return p
}

// BenchmarkRepairGeneration: one repair over a full window per op.
func BenchmarkRepairGeneration(b *testing.B) {
	for _, w := range []int{50, 200, 1000} {
		b.Run(fmt.Sprintf("w=%d", w), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			enc := mustEncoder(b, EncoderConfig{MaxWindow: w, DT: 15})
			for range w {
				if _, err := enc.AddSource(benchPayload(rng)); err != nil {
					b.Fatal(err)
				}
			}
			buf := make([]byte, 0, RepairIDLen+benchSymbolSize+2)
			b.SetBytes(int64(w * benchSymbolSize))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := enc.AppendRepair(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "repairs/s")
		})
	}
}

// benchStream is a pre-encoded run: packets in order, after losses.
type benchStream struct {
	packets []trialPacket
	sources int
	lost    int
}

// makeBenchStream encodes n sources with a repair after every `every`
// sources over a window of w, then drops each packet with probability p.
func makeBenchStream(b testing.TB, n, w, every int, p float64, seed uint64) benchStream {
	rng := rand.New(rand.NewPCG(seed, 1))
	enc := mustEncoder(b, EncoderConfig{MaxWindow: w, DT: 15})
	var s benchStream
	s.sources = n
	for i := range n {
		payload := benchPayload(rng)
		esi, err := enc.AddSource(payload)
		if err != nil {
			b.Fatal(err)
		}
		if rng.Float64() >= p {
			s.packets = append(s.packets, trialPacket{esi: esi, data: payload})
		} else {
			s.lost++
		}
		if (i+1)%every == 0 && rng.Float64() >= p {
			s.packets = append(s.packets, trialPacket{repair: true, data: mustRepair(b, enc)})
		}
	}
	return s
}

// BenchmarkDecode: decoding a run of 5000 sources at w = 200 per op, with
// a repair rate about twice the loss rate. The decoder is Reset between
// runs, so that its buffers are warm as in a long-lived flow.
func BenchmarkDecode(b *testing.B) {
	cases := []struct {
		loss  float64
		every int
	}{{0.01, 32}, {0.03, 16}, {0.05, 8}}
	for _, c := range cases {
		b.Run(fmt.Sprintf("loss=%g%%", 100*c.loss), func(b *testing.B) {
			stream := makeBenchStream(b, 5000, 200, c.every, c.loss, 7)
			b.SetBytes(int64(stream.sources * benchSymbolSize))
			b.ReportAllocs()
			var recovered uint64
			dec := mustDecoder(b, DecoderConfig{MaxWindow: 400})
			for b.Loop() {
				dec.Reset()
				for _, pkt := range stream.packets {
					if pkt.repair {
						if _, err := dec.AddRepair(pkt.data); err != nil {
							b.Fatal(err)
						}
					} else {
						dec.AddSource(pkt.esi, pkt.data)
					}
				}
				recovered = dec.Stats().Recovered
			}
			b.ReportMetric(100*float64(recovered)/float64(max(stream.lost, 1)), "%recovered")
		})
	}
}

// BenchmarkCodecProtected: the whole codec on one core, per source: encode
// it (and a repair every 16 sources over w = 200), drop 3% of all
// packets, decode. Reports protected source throughput and the share of
// lost sources recovered. (A repair every 20 sources recovers only about
// 98.5% at this loss, so 16 is the rate that suffices.)
func BenchmarkCodecProtected(b *testing.B) {
	benchmarkCodecProtected(b, 200, 16, 0.03)
}

func benchmarkCodecProtected(b *testing.B, window, every int, loss float64) {
	rng := rand.New(rand.NewPCG(3, 4))
	payloads := make([][]byte, 64)
	for i := range payloads {
		payloads[i] = benchPayload(rng)
	}
	enc := mustEncoder(b, EncoderConfig{MaxWindow: window, DT: 15})
	dec := mustDecoder(b, DecoderConfig{MaxWindow: 2 * window})
	buf := make([]byte, 0, RepairIDLen+benchSymbolSize+2)
	lost := 0
	i := 0
	b.Logf("kernel %s", KernelName())
	b.SetBytes(benchSymbolSize)
	b.ReportAllocs()
	for b.Loop() {
		payload := payloads[i%len(payloads)]
		i++
		esi, _ := enc.AddSource(payload)
		if rng.Float64() >= loss {
			dec.AddSource(esi, payload)
		} else {
			lost++
		}
		if i%every != 0 {
			continue
		}
		pkt, err := enc.AppendRepair(buf[:0])
		if err != nil {
			b.Fatal(err)
		}
		if rng.Float64() >= loss {
			if _, err := dec.AddRepair(pkt); err != nil {
				b.Fatal(err)
			}
		}
	}
	seconds := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)*benchSymbolSize*8/seconds/1e9, "Gbit/s")
	b.ReportMetric(100*float64(dec.Stats().Recovered)/float64(max(lost, 1)), "%recovered")
}
