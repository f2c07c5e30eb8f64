//go:build linux

package interop

import (
	"time"

	"github.com/satquic/satquic/netsim"
)

// scenario is a case's link, as the runner's network simulator (ns-3)
// sets it up: every scenario is its simple-p2p link, 10 Mbit/s each way
// with 15 ms of delay and a queue of 25 packets, with one change.
type scenario struct {
	// Delay replaces the 15 ms of one-way delay (longrtt: 750 ms).
	Delay time.Duration
	// Loss drops packets both ways (netsim/loss spec): the drop-rate
	// scenario, whose runs of losses are capped at 3 (loss.Burst).
	Loss string
	// Corrupt changes one byte among the first 50 of the UDP payload of
	// this share of the packets, both ways: the corrupt-rate scenario.
	// (netsim corrupts independently; the runner caps runs at 3, which at
	// 30% changes one run in 120.)
	Corrupt float64
	// DropsToServer drops the listed client packets (a netsim/loss drop
	// list, counted from 0; the runner counts from 1).
	DropsToServer string
	// BlackholeOn and BlackholeOff: the link works for BlackholeOn from
	// the start, then drops everything both ways for BlackholeOff, once.
	BlackholeOn, BlackholeOff time.Duration
	// Rebind: the client's NAT rebinds (the rebind scenario).
	Rebind rebinding
	// Namespaces: the case needs IP headers carried end to end (ECN
	// codepoints), so it runs in the emulator's namespace mode, which
	// needs root, rather than through its UDP relay, whose sockets carry
	// no ECN marks.
	Namespaces bool
}

// Link parameters of the runner's simple-p2p scenario.
const (
	runnerRate   = 10e6
	runnerDelay  = 15 * time.Millisecond
	runnerQueue  = 25 // packets
	corruptBytes = 50
)

// links returns the client-to-server and server-to-client links, with
// their randomness seeded from seed.
func (s scenario) links(seed uint64) (up, down netsim.LinkConfig) {
	base := netsim.LinkConfig{RateBps: runnerRate, Delay: runnerDelay, QueuePackets: runnerQueue}
	if s.Delay > 0 {
		base.Delay = s.Delay
	}
	base.Loss = s.Loss
	if s.Corrupt > 0 {
		base.Corrupt, base.CorruptRegion = s.Corrupt, corruptBytes
	}
	if s.BlackholeOff > 0 {
		base.Outages = []netsim.Outage{{Start: s.BlackholeOn, Duration: s.BlackholeOff}}
	}
	up, down = base, base
	if s.DropsToServer != "" {
		up.Loss = s.DropsToServer
	}
	up.Seed, down.Seed = netsim.DeriveSeed(seed, 1), netsim.DeriveSeed(seed, 2)
	return up, down
}

// rebinding is the rebind scenario of the runner's network simulator: the
// client's NAT gives it a new port First into the run and every Every
// after, and a new IP address each time too with Addr.
type rebinding struct {
	First, Every time.Duration
	Addr         bool
}

// runnerRebind is the runner's rebinding: first after 1 s, then every 5 s.
var runnerRebind = rebinding{First: time.Second, Every: 5 * time.Second}
