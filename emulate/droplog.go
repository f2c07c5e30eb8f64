//go:build linux

package emulate

import (
	"time"

	"github.com/satquic/satquic/netsim"
)

// dropCounts are a link model's drop counters (netsim.Link.DropCounts).
type dropCounts struct{ loss, outage, queue int64 }

func countsOfLink(l *netsim.Link) dropCounts {
	var c dropCounts
	c.loss, c.outage, c.queue = l.DropCounts()
	return c
}

// The drop log: when the link model dropped a packet and why, so that a
// benchmark can tell which of its requests a loss burst or an outage hit.

// dropLogMax bounds the drops a direction remembers; past it the newest
// are not recorded (DropsLogFull says so). At 0.45% loss a run of a
// million packets drops about 4500.
const dropLogMax = 1 << 16

// Drop is one packet the link model dropped.
type Drop struct {
	// AtS is when, in seconds of the emulator's clock (Stats.ElapsedS),
	// the time the model's outages and delay steps count from.
	AtS float64 `json:"at_s"`
	// Up: the uplink (client to server) dropped it, else the downlink.
	Up bool `json:"up"`
	// Size is the IP packet's length in bytes.
	Size int `json:"size"`
	// Reason is "loss" (the random loss model), "outage" or "queue".
	Reason string `json:"reason"`
}

// dropLog records a direction's drops; the direction's mutex guards it.
type dropLog struct {
	drops []Drop
	full  bool
}

// noteOffer records the drop, if any, of the packet of size just offered
// at now, from the model's counters before (was) and after (is) the offer.
func (l *dropLog) noteOffer(now time.Duration, up bool, size int, was, is dropCounts) {
	reason := ""
	switch {
	case is.loss > was.loss:
		reason = "loss"
	case is.outage > was.outage:
		reason = "outage"
	case is.queue > was.queue:
		reason = "queue"
	default:
		return
	}
	if len(l.drops) == dropLogMax {
		l.full = true
		return
	}
	l.drops = append(l.drops, Drop{AtS: now.Seconds(), Up: up, Size: size, Reason: reason})
}
