package baseline

import (
	"math/rand/v2"
	"testing"

	"github.com/satquic/satquic/fec"
)

// Benchmarks of the baselines on 1200-byte packets: encoding throughput,
// and decoding of a stream with 1% uniform loss (recovered % reported).

type codeBench struct {
	name   string
	newEnc func() (fec.SchemeEncoder, error)
	newDec func() (fec.SchemeDecoder, error)
}

func codeBenches() []codeBench {
	m1 := MaelstromConfig{Interleaves: []int{1, 20}, Window: 20}
	m2 := MaelstromConfig{Interleaves: []int{1, 20, 40}, Window: 8}
	return []codeBench{
		{"xor-10", func() (fec.SchemeEncoder, error) { return NewXOREncoder(10) }, func() (fec.SchemeDecoder, error) { return NewXORDecoder(10) }},
		{"rs-10+2", func() (fec.SchemeEncoder, error) { return NewRSEncoder(10, 2) }, func() (fec.SchemeDecoder, error) { return NewRSDecoder(10, 2) }},
		{"maelstrom-1-20:20", func() (fec.SchemeEncoder, error) { return NewMaelstromEncoder(m1) }, func() (fec.SchemeDecoder, error) { return NewMaelstromDecoder(m1) }},
		{"maelstrom-1-20-40:8", func() (fec.SchemeEncoder, error) { return NewMaelstromEncoder(m2) }, func() (fec.SchemeDecoder, error) { return NewMaelstromDecoder(m2) }},
	}
}

const benchPacketSize = 1200

func BenchmarkEncode(b *testing.B) {
	payload := make([]byte, benchPacketSize)
	for _, bb := range codeBenches() {
		b.Run(bb.name, func(b *testing.B) {
			enc, err := bb.newEnc()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(benchPacketSize)
			b.ReportAllocs()
			sources, repairs := 0, 0
			for b.Loop() {
				repairs += len(enc.AddSource(payload))
				sources++
			}
			b.ReportMetric(100*float64(repairs)/float64(sources), "overhead%")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	const sources = 20000
	rng := rand.New(rand.NewPCG(1, 2))
	payloads := randomPayloads(rng, sources, benchPacketSize)
	streamBytes := int64(0)
	for _, p := range payloads {
		streamBytes += int64(len(p))
	}
	for _, bb := range codeBenches() {
		b.Run(bb.name, func(b *testing.B) {
			enc, err := bb.newEnc()
			if err != nil {
				b.Fatal(err)
			}
			sent := encodeStream(enc, payloads)
			lost := uniformLoss(rng, len(sent), 0.01)
			lostSources := 0
			for i, p := range sent {
				if lost[i] && !p.repair {
					lostSources++
				}
			}
			b.SetBytes(streamBytes)
			b.ReportAllocs()
			recovered := 0
			for b.Loop() {
				dec, _ := bb.newDec()
				recovered = decodeStream(b, dec, sent, lost)
			}
			b.ReportMetric(100*float64(recovered)/float64(lostSources), "recovered%")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(sent)), "ns/packet")
		})
	}
}

// decodeStream feeds the received packets to dec and counts recoveries.
func decodeStream(b *testing.B, dec fec.SchemeDecoder, sent []sentPacket, lost []bool) int {
	recovered := 0
	for i, p := range sent {
		if lost[i] {
			continue
		}
		if !p.repair {
			recovered += len(dec.AddSource(p.esi, p.data))
			continue
		}
		recs, err := dec.AddRepair(p.data)
		if err != nil {
			b.Fatal(err)
		}
		recovered += len(recs)
	}
	return recovered
}
