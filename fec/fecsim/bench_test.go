package fecsim

import (
	"testing"
)

// BenchmarkRun simulates each scheme over the Starlink fit and reports,
// besides the time per simulated source packet, the figures that matter:
// overhead and recovered ratio in percent, and the decoder's time per
// packet.
func BenchmarkRun(b *testing.B) {
	for _, name := range SchemeNames {
		b.Run(name, func(b *testing.B) {
			const packets = 20_000
			var last Result
			for b.Loop() {
				r, err := Run(RunConfig{Scheme: SchemeConfig{Name: name}, Loss: StarlinkLoss, Packets: packets, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				last = r
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(last.SourcesSent), "ns/source")
			b.ReportMetric(last.Overhead*100, "overhead%")
			b.ReportMetric(last.RecoveredRatio*100, "recovered%")
			b.ReportMetric(last.DecodeNsPerPacket, "decode-ns/pkt")
		})
	}
}
