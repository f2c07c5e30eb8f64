//go:build linux

package tunnelbench

import (
	"cmp"
	"slices"
	"time"

	"github.com/satquic/satquic/emulate"
)

// The slowest requests of a run, each with what the link did while it
// ran: what a user reads to learn what the tail waited for.

// SlowRequest is one of the slowest requests of a result.
type SlowRequest struct {
	// Flow is the kept-alive connection that sent it (0 to --parallel-1).
	Flow int `json:"flow"`
	// StartS is when it started, in seconds of the emulator's clock, from
	// which the profile's outages and delay steps count (starlink: an
	// outage at every multiple of 15 s); TimeS is how long it took.
	StartS float64 `json:"start_s"`
	TimeS  float64 `json:"time_s"`
	// Cause is what the link did while it ran: "outage" (an outage
	// dropped packets), "loss" (the loss model dropped some, no outage),
	// "queue" (only a full queue dropped some) or "none".
	Cause string `json:"cause"`
	// LossUp and LossDown count the packets the loss model dropped on the
	// uplink and the downlink while it ran, of any connection; OutageDrops
	// and QueueDrops those an outage and a full queue dropped.
	LossUp      int `json:"loss_drops_up"`
	LossDown    int `json:"loss_drops_down"`
	OutageDrops int `json:"outage_drops"`
	QueueDrops  int `json:"queue_drops"`
	// SmallDrops counts the dropped packets of at most smallPacket bytes:
	// on the tunnel's path, datagrams that carry pure inner TCP
	// acknowledgements, SYNs or FINs, or small repairs.
	SmallDrops int `json:"small_drops"`
}

// smallPacket is the largest IP packet counted as small: a QUIC packet
// with an inner TCP segment without payload, about 100 bytes, and its
// FEC framing.
const smallPacket = 200

// slowCount is how many of n requests a result details: the slowest 1%,
// and at least 10.
func slowCount(n int) int { return min(n, max(10, n/100)) }

// slowest returns the slowest of reqs, slowest first, each classified by
// the drops of the link (times in seconds of the emulator's clock, whose
// zero is epoch).
func slowest(reqs []request, drops []emulate.Drop, epoch time.Time) []SlowRequest {
	sorted := slices.Clone(reqs)
	slices.SortStableFunc(sorted, func(a, b request) int { return cmp.Compare(b.took, a.took) })
	out := make([]SlowRequest, 0, slowCount(len(sorted)))
	for _, r := range sorted[:slowCount(len(sorted))] {
		start := r.start.Sub(epoch).Seconds()
		s := SlowRequest{Flow: r.flow, StartS: start, TimeS: r.took.Seconds()}
		classify(&s, drops, start, start+r.took.Seconds())
		out = append(out, s)
	}
	return out
}

// classify counts the drops between from and to into s and names its
// cause.
func classify(s *SlowRequest, drops []emulate.Drop, from, to float64) {
	for _, d := range drops {
		if d.AtS < from || d.AtS > to {
			continue
		}
		switch {
		case d.Reason == "outage":
			s.OutageDrops++
		case d.Reason == "queue":
			s.QueueDrops++
		case d.Up:
			s.LossUp++
		default:
			s.LossDown++
		}
		if d.Size <= smallPacket {
			s.SmallDrops++
		}
	}
	switch {
	case s.OutageDrops > 0:
		s.Cause = "outage"
	case s.LossUp+s.LossDown > 0:
		s.Cause = "loss"
	case s.QueueDrops > 0:
		s.Cause = "queue"
	default:
		s.Cause = "none"
	}
}

// tailCauses counts the causes of the slowest requests.
func tailCauses(slow []SlowRequest) map[string]int {
	m := map[string]int{}
	for _, s := range slow {
		m[s.Cause]++
	}
	return m
}
