package core

import (
	"math"

	"github.com/satquic/satquic/fec"
)

// Tail protection. A loss among the last packets of a burst of data has
// no later packet to reveal it: without help it waits for a probe timeout
// (RFC 9002 section 6.2). When the application has nothing more to send,
// the sender owes repairs over the newest sources, and reacts when their
// acknowledgement shows sources still missing.
//
// How many: one full-size repair per tail (two when the measured loss is
// high) is what the overhead allows when tails are short, as for small
// HTTP responses. A tail of small sources (a request, a short message)
// gives small repairs, whose cost in capacity is small too: there the
// sender adds repairs until a loss burst of the measured mean length
// (geometric lengths, as the loss monitor models them) outlasts them all
// with a probability of at most tailMissTarget, and at least as many as a
// quarter of a full repair pays for, up to tailMaxRepairs in all. The
// second rule is for sparse sources, such as one request per round trip:
// their loss monitor never sees a burst span two of them, so it measures
// bursts of one packet whatever the path does. Both wait until the loss
// measured exceeds a clean path's (fecCleanLoss, the controller's prior):
// until then losses are rare enough that one repair does.
//
// Tail repairs take from the overhead allowance what they are, bytes
// (fec_budget.go), as every repair does: a small tail's repair is small
// and costs little. Small sources earn little too, so a sparse flow that
// goes on (a voice call, or a trickle of small packets through a tunnel
// such as inner TCP acknowledgements), which makes a tail of almost every
// packet, gets a repair over only some of its tails, as many as
// MaxOverhead of its bytes pays for; the next repair's window covers the
// sources of the tails in between. Each direction of a connection has its
// own allowance, so the acknowledgements of one direction take nothing
// from the responses of the other.

const (
	// maxTails bounds the tail repairs remembered.
	maxTails = 16
	// tailMaxRepairs bounds the repairs over one tail.
	tailMaxRepairs = 4
	// tailMissTarget is the chance, for a burst that takes the tail's
	// last source, of also taking every repair of a tail of small sources.
	tailMissTarget = 0.2
	// tailHighLoss is the measured loss rate above which a tail of full
	// sources gets two repairs.
	tailHighLoss = 0.02
	// tailSmallShare is the largest cost of a repair, as a share of a full
	// one, for which extra tail repairs are sent.
	tailSmallShare = 0.25
)

// tailState is the sender's tail protection.
type tailState struct {
	// done: a repair went out after the newest source.
	done bool
	// repairs are the recent repairs sent over the newest source, to
	// react when their acknowledgement shows sources still missing.
	repairs []tailRepair
}

// tailRepair is a repair sent when its window ended at the newest source.
type tailRepair struct {
	pn       uint64 // the repair's packet
	first    uint64 // the first and one past the last source it covers
	end      uint64
	answered bool
}

// remember records a tail repair, forgetting the oldest past maxTails.
func (t *tailState) remember(r tailRepair) {
	if len(t.repairs) == maxTails {
		t.repairs = append(t.repairs[:0], t.repairs[1:]...)
	}
	t.repairs = append(t.repairs, r)
}

// protectTail owes repairs over the newest sources when the application
// has nothing more to send, so that a loss among the last packets is
// repaired without waiting for a probe timeout.
func (f *fecSender) protectTail() {
	if f.cfg.NoTailProtection || f.tail.done || f.owed > 0 || f.enc.Len() == 0 {
		return
	}
	loss, burst := 0.0, 1.0
	if ad, ok := f.ctrl.(*fec.AdaptiveController); ok {
		loss, burst = ad.Estimate()
	}
	n := 1
	if loss >= tailHighLoss {
		n = 2
	}
	if share := f.tailRepairShare(); share <= tailSmallShare && loss > fecCleanLoss {
		n = max(n, tailRepairsFor(burst), min(int(tailSmallShare/share), tailMaxRepairs))
	}
	f.owe(n)
	f.tail.done = true
}

// tailRepairsFor is the number of repairs that a burst of mean length
// burst, having taken the last source, also takes all of with probability
// at most tailMissTarget: with geometric lengths a burst goes on from one
// packet to the next with probability 1-1/burst.
func tailRepairsFor(burst float64) int {
	if burst <= 1 {
		return 1
	}
	n := math.Ceil(math.Log(tailMissTarget) / math.Log(1-1/burst))
	return int(min(max(n, 1), tailMaxRepairs))
}

// tailRepairShare is what a repair over the newest sources costs, as a
// share of a full one: its symbol is as long as the longest source it
// covers (RFC 8681 section 4.2 pads the shorter ones).
func (f *fecSender) tailRepairShare() float64 {
	return min(float64(f.repairCost())/f.budget.full, 1)
}

// onTailAcked reacts to the acknowledgement of a tail repair: sources of
// its window still outstanding after the newest acknowledged one were lost
// (a later packet, the repair, arrived), and no later source will end
// their loss run for the loss monitor, so repairs go now, one per missing
// source beyond what the repair itself rebuilds. Without it the end of a
// burst waits for the loss timer. Holes before an acknowledged source are
// left to the monitor, whose report the same acknowledgement triggers and
// whose reaction counts the tail repair as in flight: owing for them here
// too would send their repairs twice.
func (f *fecSender) onTailAcked(pn uint64) {
	for i := range f.tail.repairs {
		t := &f.tail.repairs[i]
		if t.pn != pn || t.answered {
			continue
		}
		t.answered = true
		if t.end != f.src.next {
			return // newer sources went out: their ACKs tell the monitor
		}
		if !f.oweReaction(f.trailingMissing(t.first, t.end) - 1) {
			f.giveUp(t.end)
		}
		return
	}
}

// trailingMissing counts the sources of [first, end) still outstanding
// after the newest acknowledged one.
func (f *fecSender) trailingMissing(first, end uint64) int {
	missing := 0
	for seq := end; seq > max(first, f.src.base); seq-- {
		e := f.src.at(seq - 1)
		if e == nil {
			break
		}
		if e.state == sourceAcked {
			break
		}
		if e.state == sourceOutstanding {
			missing++
		}
	}
	return missing
}
