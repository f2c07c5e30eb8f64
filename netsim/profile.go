package netsim

import (
	"fmt"
	"strings"
	"time"
)

// Profile is a named network path: Down carries server-to-client traffic,
// Up client-to-server. The table, Profiles, is shared by the simulator, the
// emulator and the experiments (docs/architecture.md, "Network profiles").
type Profile struct {
	Name, Description string
	Down, Up          LinkConfig
}

// RTT is the path's base round-trip propagation delay (no queueing, jitter
// or delay steps).
func (p Profile) RTT() time.Duration { return p.Down.Delay + p.Up.Delay }

// BDPBytes is the bandwidth-delay product of the downlink, the direction
// bulk transfers use: peak down rate x RTT.
func (p Profile) BDPBytes() int {
	return int(p.Down.PeakRateBps() * p.RTT().Seconds() / 8)
}

// WithSeed returns the profile with its two directions seeded from seed
// (and different from each other), so that a run is reproducible.
func (p Profile) WithSeed(seed uint64) Profile {
	p.Down = p.Down.clone()
	p.Up = p.Up.clone()
	p.Down.Seed = seed
	p.Up.Seed = seed ^ 0x5bd1e9955bd1e995
	return p
}

// Values shared by several profiles.
const (
	mbps = 1e6
	// interopQueuePackets is the QUIC interop runner's default queue (its
	// ns-3 simple-p2p scenario), kept by the satellite interop runner.
	interopQueuePackets = 25
	// starlinkReconfiguration is Starlink's scheduling period: every 15 s
	// the satellite serving a dish may change, with a delay step and a
	// short loss spike (published Starlink measurements: delay steps of up to
	// 50 ms and loss bursts at those instants).
	starlinkReconfiguration = 15 * time.Second
)

// symmetric returns a profile with the same settings in both directions and
// a rate for each.
func symmetric(name, desc string, down, up float64, cfg LinkConfig) Profile {
	d, u := cfg.clone(), cfg.clone()
	d.RateBps, u.RateBps = down, up
	return Profile{Name: name, Description: desc, Down: d, Up: u}
}

// starlinkLink is one direction of the starlink profile: 25 ms with a few
// ms of jitter and Gilbert-Elliott loss fitted to measurements (mean 0.45%,
// mean burst 3 packets); at each 15 s reconfiguration the delay steps to
// 40 ms for 3 s and the link drops everything for 40 ms.
func starlinkLink(rate float64) LinkConfig {
	return LinkConfig{
		RateBps: rate,
		Delay:   25 * time.Millisecond,
		Jitter:  3 * time.Millisecond,
		Loss:    "ge:0.00151,0.3333333333333333",
		DelaySteps: []DelayStep{
			{At: starlinkReconfiguration, Delay: 40 * time.Millisecond, Every: starlinkReconfiguration},
			{At: starlinkReconfiguration + 3*time.Second, Delay: 25 * time.Millisecond, Every: starlinkReconfiguration},
		},
		Outages: []Outage{{Start: starlinkReconfiguration, Duration: 40 * time.Millisecond, Repeat: starlinkReconfiguration}},
	}
}

// Profiles returns the profile table, freshly built (callers may modify it).
func Profiles() []Profile {
	geoInterop := LinkConfig{Delay: 300 * time.Millisecond, QueuePackets: interopQueuePackets}
	geoInteropLossy := geoInterop
	geoInteropLossy.Loss = "uniform:0.01"
	return []Profile{
		symmetric("seed-ifc", "seed 000's netem setup: 50 Mbit/s, 50 ms each way, 0.1% uniform loss each way",
			50*mbps, 50*mbps, LinkConfig{Delay: 50 * time.Millisecond, Loss: "uniform:0.001"}),
		{Name: "starlink", Description: "Starlink: 100/20 Mbit/s, 25 ms +- 3 ms, Gilbert-Elliott p=0.00151 r=1/3 " +
			"(0.45% loss, 3-packet bursts), every 15 s a 40 ms outage and 3 s at 40 ms delay",
			Down: starlinkLink(100 * mbps), Up: starlinkLink(20 * mbps)},
		symmetric("geo", "GEO, draft-kuhn-quic-4-sat \"medium\": 50/10 Mbit/s, 325 ms each way, buffer = BDP",
			50*mbps, 10*mbps, LinkConfig{Delay: 325 * time.Millisecond}),
		symmetric("geo-large", "GEO, quic-4-sat \"large\" and picoquic's satellite tests: 250/3 Mbit/s, 300 ms each way",
			250*mbps, 3*mbps, LinkConfig{Delay: 300 * time.Millisecond}),
		symmetric("geo-gbit", "GEO at 1 Gbit/s, the fastest path the default windows are sized for "+
			"(twice its 81.25 MB BDP): 1000/20 Mbit/s, 325 ms each way, buffer = BDP",
			1000*mbps, 20*mbps, LinkConfig{Delay: 325 * time.Millisecond}),
		symmetric("geo-lossy", "GEO, quic-4-sat \"large lossy\" (seed 004): 250/3 Mbit/s, 300 ms, 1% uniform loss each way",
			250*mbps, 3*mbps, LinkConfig{Delay: 300 * time.Millisecond, Loss: "uniform:0.01"}),
		symmetric("geo-interop", "satellite interop runner SAT: 20/2 Mbit/s, 300 ms each way, 25-packet queue",
			20*mbps, 2*mbps, geoInterop),
		symmetric("geo-interop-lossy", "satellite interop runner SATL: geo-interop with 1% uniform loss each way",
			20*mbps, 2*mbps, geoInteropLossy),
		symmetric("ifc-geo", "in-flight Wi-Fi over GEO: 5/1 Mbit/s, 300 ms +- 50 ms, Gilbert-Elliott p=3% r=40% "+
			"loss 95% in bad, 1% in good",
			5*mbps, 1*mbps, LinkConfig{Delay: 300 * time.Millisecond, Jitter: 50 * time.Millisecond, Loss: "ge:0.03,0.4,0.95,0.01"}),
		symmetric("p2p", "QUIC interop runner default: 10 Mbit/s, 15 ms each way, 25-packet queue",
			10*mbps, 10*mbps, LinkConfig{Delay: 15 * time.Millisecond, QueuePackets: interopQueuePackets}),
	}
}

// ProfileNames lists the profile names in table order.
func ProfileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// LookupProfile returns the profile with the given name.
func LookupProfile(name string) (Profile, error) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown network profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
}
