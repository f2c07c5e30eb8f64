package netsim

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// randomLinkConfig draws a configuration that exercises every feature.
func randomLinkConfig(r *rand.Rand) LinkConfig {
	cfg := LinkConfig{
		RateBps:      []float64{0, 1e6, 10e6, 123456.7}[r.IntN(4)],
		Delay:        time.Duration(r.IntN(50)) * ms,
		Jitter:       time.Duration(r.IntN(10)) * ms,
		Reorder:      r.IntN(2) == 0,
		QueueBytes:   r.IntN(3) * 20000,
		QueuePackets: r.IntN(3) * 10,
		Loss:         []string{"", "uniform:0.05", "ge:0.02,0.3", "burst:0.2,3", "drop:3,10-20"}[r.IntN(5)],
		Duplicate:    r.Float64() * 0.1,
		Corrupt:      r.Float64() * 0.1,
		ECNThreshold: r.IntN(2) * 5000,
		MTU:          r.IntN(2) * 1400,
		Seed:         r.Uint64(),
	}
	if r.IntN(2) == 0 {
		cfg.RateSchedule = []RateStep{{At: 100 * ms, RateBps: 2e6}, {At: 300 * ms, RateBps: 20e6}}
	}
	if r.IntN(2) == 0 {
		cfg.Outages = []Outage{{Start: 50 * ms, Duration: 20 * ms, Repeat: 200 * ms}}
	}
	if r.IntN(2) == 0 {
		cfg.DelaySteps = []DelayStep{{At: 80 * ms, Delay: 70 * ms, Every: 250 * ms}, {At: 150 * ms, Delay: 5 * ms, Every: 250 * ms}}
	}
	if r.IntN(4) == 0 {
		tr, _ := ParseMahimahi(strings.NewReader("1\n1\n2\n5\n5\n5\n7\n"))
		cfg.Trace = tr
	}
	return cfg
}

// TestLinkProperties drives random configurations with random traffic and
// checks what must hold whatever the configuration: deliveries come out in
// due order, never before they are due nor before they were offered, and
// every packet is accounted for.
func TestLinkProperties(t *testing.T) {
	master := rand.Uint64()
	for i := range 60 {
		seed := master + uint64(i)
		r := rand.New(rand.NewPCG(seed, 1))
		cfg := randomLinkConfig(r)
		if err := checkLinkProperties(cfg, r); err != "" {
			t.Fatalf("seed %d, config %+v: %s", seed, cfg, err)
		}
	}
}

func checkLinkProperties(cfg LinkConfig, r *rand.Rand) string {
	l, err := NewLink(cfg)
	if err != nil {
		return "NewLink: " + err.Error()
	}
	var now, lastDue time.Duration
	offeredAt := map[byte]time.Duration{}
	for i := range 2000 {
		now += time.Duration(r.IntN(2000)) * time.Microsecond
		id := byte(i)
		offeredAt[id] = now
		l.Offer(now, packet(id, 1+r.IntN(1500)))
		for {
			d, ok := l.Deliver(now)
			if !ok {
				break
			}
			if d.At > now || d.At < lastDue {
				return "delivery out of due order or early"
			}
			lastDue = d.At
		}
		if next, ok := l.Next(); ok && next < lastDue {
			return "Next earlier than a packet already delivered"
		}
	}
	s := l.Stats()
	if s.Offered+s.Duplicated != s.Delivered+s.Dropped()+s.InFlight {
		return "counters do not balance"
	}
	if s.QueueDelayP50 > s.QueueDelayP99 || s.QueueDelayP99 > s.QueueDelayMax {
		return "queue delay percentiles out of order"
	}
	return ""
}

func FuzzParseMahimahi(f *testing.F) {
	for _, s := range []string{"1\n1\n3\n", "0\n5\n", "\n\n7", "5\n3\n", "x", "0 \n 10 \n10\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tr, err := ParseMahimahi(strings.NewReader(text))
		if err != nil {
			return
		}
		if tr.Period() <= 0 || tr.MeanRateBps() <= 0 {
			t.Fatalf("trace %q: period %v rate %v", text, tr.Period(), tr.MeanRateBps())
		}
		// Opportunities found from any time are at or after it, and walking
		// the cursor never goes back in time.
		for _, now := range []time.Duration{0, 1, tr.Period(), tr.Period() + 1, 3*tr.Period() - 1} {
			c := tr.firstAtOrAfter(now)
			at := tr.at(c)
			if at < now {
				t.Fatalf("trace %q: first opportunity after %v is at %v", text, now, at)
			}
			for range 20 {
				c = tr.next(c)
				if tr.at(c) < at {
					t.Fatalf("trace %q: cursor went back to %v from %v", text, tr.at(c), at)
				}
				at = tr.at(c)
			}
		}
	})
}
