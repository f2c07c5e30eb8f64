package netsim

import (
	"strings"
	"testing"
	"time"
)

func TestProfilesAreValidAndUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Profiles() {
		if seen[p.Name] {
			t.Errorf("profile %s listed twice", p.Name)
		}
		seen[p.Name] = true
		if p.Description == "" {
			t.Errorf("profile %s has no description", p.Name)
		}
		for dir, cfg := range map[string]LinkConfig{"down": p.Down, "up": p.Up} {
			if _, err := NewLink(cfg); err != nil {
				t.Errorf("profile %s %s: %v", p.Name, dir, err)
			}
			if cfg.RateBps <= 0 || cfg.Delay <= 0 {
				t.Errorf("profile %s %s: rate %v delay %v", p.Name, dir, cfg.RateBps, cfg.Delay)
			}
		}
	}
	for _, name := range []string{"seed-ifc", "starlink", "geo", "geo-large", "geo-gbit", "geo-lossy", "geo-interop",
		"geo-interop-lossy", "ifc-geo", "p2p"} {
		if !seen[name] {
			t.Errorf("profile %s missing", name)
		}
	}
}

func TestProfileNumbers(t *testing.T) {
	for name, want := range map[string]struct {
		rtt        time.Duration
		bdp        int
		down, up   float64
		loss       string
		queuePkts  int
		queueBytes int
	}{
		"geo":         {650 * ms, 4_062_500, 50e6, 10e6, "", 0, 4_062_500},
		"geo-large":   {600 * ms, 18_750_000, 250e6, 3e6, "", 0, 18_750_000},
		"geo-lossy":   {600 * ms, 18_750_000, 250e6, 3e6, "uniform:0.01", 0, 18_750_000},
		"geo-gbit":    {650 * ms, 81_250_000, 1000e6, 20e6, "", 0, 81_250_000},
		"seed-ifc":    {100 * ms, 625_000, 50e6, 50e6, "uniform:0.001", 0, 625_000},
		"p2p":         {30 * ms, 37_500, 10e6, 10e6, "", 25, 65_536},
		"geo-interop": {600 * ms, 1_500_000, 20e6, 2e6, "", 25, 1_500_000},
		"starlink":    {50 * ms, 625_000, 100e6, 20e6, "ge:0.00151,0.3333333333333333", 0, 625_000},
		"ifc-geo":     {600 * ms, 375_000, 5e6, 1e6, "ge:0.03,0.4,0.95,0.01", 0, 375_000},
	} {
		p, err := LookupProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.RTT() != want.rtt || p.BDPBytes() != want.bdp {
			t.Errorf("%s: RTT %v BDP %d, want %v and %d", name, p.RTT(), p.BDPBytes(), want.rtt, want.bdp)
		}
		if p.Down.RateBps != want.down || p.Up.RateBps != want.up {
			t.Errorf("%s: rates %v / %v", name, p.Down.RateBps, p.Up.RateBps)
		}
		if p.Down.Loss != want.loss || p.Up.Loss != want.loss {
			t.Errorf("%s: loss %q / %q, want %q", name, p.Down.Loss, p.Up.Loss, want.loss)
		}
		if p.Down.QueuePackets != want.queuePkts || p.Down.EffectiveQueueBytes() != want.queueBytes {
			t.Errorf("%s: queue %d packets %d bytes", name, p.Down.QueuePackets, p.Down.EffectiveQueueBytes())
		}
	}
}

func TestLookupProfileError(t *testing.T) {
	_, err := LookupProfile("leo")
	if err == nil || !strings.Contains(err.Error(), `"leo"`) || !strings.Contains(err.Error(), "geo-interop-lossy") {
		t.Errorf("LookupProfile(leo) = %v, want an error naming it and listing the profiles", err)
	}
}

// TestStarlinkReconfiguration follows packets across the 15 s boundary:
// lost for 40 ms, then 3 s at 40 ms delay, then back to 25 ms.
func TestStarlinkReconfiguration(t *testing.T) {
	p, _ := LookupProfile("starlink")
	cfg := p.Down
	cfg.Jitter, cfg.Loss = 0, "" // isolate the schedule
	l := newTestLink(t, cfg)
	s := time.Second
	offers := []time.Duration{14 * s, 15 * s, 15*s + 39*ms, 15*s + 40*ms, 17 * s, 18*s + 10*ms, 30*s + 50*ms}
	for i, at := range offers {
		l.Offer(at, packet(byte(i), 1250)) // 0.1 ms at 100 Mbit/s
	}
	tx := 100 * time.Microsecond
	checkArrivals(t, drain(l), []arrival{
		{0, 14*s + tx + 25*ms}, {3, 15*s + 40*ms + tx + 40*ms}, {4, 17*s + tx + 40*ms},
		{5, 18*s + 10*ms + tx + 25*ms}, {6, 30*s + 50*ms + tx + 40*ms},
	})
}

func TestWithSeedSeparatesDirections(t *testing.T) {
	p, _ := LookupProfile("geo-lossy")
	a, b := p.WithSeed(1), p.WithSeed(2)
	if a.Down.Seed == a.Up.Seed || a.Down.Seed == b.Down.Seed {
		t.Errorf("seeds down %d up %d, other run down %d", a.Down.Seed, a.Up.Seed, b.Down.Seed)
	}
}

func TestProfilesAreFreshCopies(t *testing.T) {
	p, _ := LookupProfile("starlink")
	p.Down.DelaySteps[0].Delay = time.Hour
	q, _ := LookupProfile("starlink")
	if q.Down.DelaySteps[0].Delay == time.Hour {
		t.Error("changing a returned profile changed the table")
	}
}
