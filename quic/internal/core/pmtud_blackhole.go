package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// blackHoleLosses is how many packets above the base size must be lost,
// with none of them acknowledged in between, before a black hole is
// suspected (and a probe confirms it, pmtud_confirm.go).
const blackHoleLosses = 5

// blackHole is the simple black hole detection of RFC 8899 section 4.3:
// after path MTU discovery raised the datagram size, the path may stop
// carrying large packets (a route change, a tunnel). The sign is a run of
// lost packets above the base size, none acknowledged, while smaller
// ack-eliciting packets get through. Congestion and outages also lose
// runs of packets, but they lose small ones too: so a black hole needs a
// large packet lost that was sent after a small one that arrived, itself
// sent after the run began. PTO probes are small once the size was raised
// (pmtuState.budget), so a bulk transfer whose large packets vanish still has
// small packets to show it.
type blackHole struct {
	// above: packets larger than this are large; 0 while not watching.
	above int
	// inRun: large packets were lost since the newest large one was
	// acknowledged; runStart is when the first of them was sent and run
	// counts them.
	inRun    bool
	runStart time.Duration
	run      int
	// smallAcked is the send time of the newest small ack-eliciting
	// packet acknowledged (hasSmall: there is one).
	hasSmall   bool
	smallAcked time.Duration
	// smallInRun: a small packet sent at smallAt, after the run began,
	// was acknowledged; interleaved counts the large packets sent after
	// it and lost.
	smallInRun  bool
	smallAt     time.Duration
	interleaved int
	// largeAcked is the send time of the newest large packet
	// acknowledged (hasLarge: there is one). A large packet lost before
	// it was sent is no sign of a black hole: large packets got through
	// after it. Within one ACK, acknowledgements come before losses, so
	// that the losses an ACK reveals (random loss on a path whose
	// receiver acknowledges every hundred packets reveals several at
	// once) are weighed against the large packets it acknowledged.
	hasLarge   bool
	largeAcked time.Duration
}

// watch starts watching packets larger than above.
func (h *blackHole) watch(above int) { *h = blackHole{above: above} }

// stop ends the watch.
func (h *blackHole) stop() { *h = blackHole{} }

func (h *blackHole) watching() bool { return h.above > 0 }

// onAcked: a large packet sent after the run began ends it; a small one
// may show that small packets get through.
func (h *blackHole) onAcked(p recovery.PacketInfo) {
	if !h.watching() {
		return
	}
	if p.Bytes > h.above {
		if !h.hasLarge || p.TimeSent > h.largeAcked {
			h.hasLarge, h.largeAcked = true, p.TimeSent
		}
		if h.inRun && p.TimeSent > h.runStart {
			h.inRun, h.run, h.smallInRun, h.interleaved = false, 0, false, 0
		}
		return
	}
	if !p.AckEliciting {
		return
	}
	if !h.hasSmall || p.TimeSent > h.smallAcked {
		h.hasSmall, h.smallAcked = true, p.TimeSent
	}
	if h.inRun && !h.smallInRun && p.TimeSent > h.runStart {
		h.smallInRun, h.smallAt = true, p.TimeSent
	}
}

// onLost counts a lost large packet in the run.
func (h *blackHole) onLost(p recovery.PacketInfo) {
	if !h.watching() || p.Bytes <= h.above {
		return
	}
	if h.hasLarge && h.largeAcked > p.TimeSent {
		return
	}
	if !h.inRun {
		h.inRun, h.runStart, h.run, h.interleaved = true, p.TimeSent, 0, 0
		// Within one ACK, acknowledgements come before losses: the
		// small packet that arrived may already be known.
		h.smallInRun = h.hasSmall && h.smallAcked > p.TimeSent
		h.smallAt = h.smallAcked
	}
	h.run++
	if h.smallInRun && p.TimeSent > h.smallAt {
		h.interleaved++
	}
}

// detected reports a black hole, which a probe then confirms or
// dismisses (pmtud_confirm.go).
func (h *blackHole) detected() bool {
	return h.watching() && h.run >= blackHoleLosses && h.interleaved > 0
}
