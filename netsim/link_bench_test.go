package netsim

import (
	"testing"
	"time"
)

// BenchmarkLinkOfferDeliver pushes 1400-byte packets through a 300 Mbit/s
// GEO-like link with Gilbert-Elliott loss, at the link's own rate, and
// reports how many packets per second one core can move.
func BenchmarkLinkOfferDeliver(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  LinkConfig
	}{
		{"plain", LinkConfig{RateBps: 300e6, Delay: 300 * ms}},
		{"loss+jitter", LinkConfig{RateBps: 300e6, Delay: 300 * ms, Jitter: ms, Loss: "ge:0.00151,0.333"}},
		{"reorder", LinkConfig{RateBps: 300e6, Delay: 300 * ms, Jitter: ms, Reorder: true, Loss: "uniform:0.01"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l, err := NewLink(bc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			pkt := make([]byte, 1400)
			gap := time.Duration(1400 * 8 * 1e9 / bc.cfg.RateBps)
			var now time.Duration
			b.SetBytes(1400)
			for b.Loop() {
				now += gap
				l.Offer(now, pkt)
				for {
					if _, ok := l.Deliver(now); !ok {
						break
					}
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpkt/s")
		})
	}
}
