package core

// The receive path, stage 6 of 6: the acknowledgement of a processed
// packet. ackState records its packet number, for duplicate detection and
// ACK frames, and decides when the next ACK frame is due (RFC 9000 section
// 13.2), with the threshold of ackrate.go. This is where receiving ends:
// the packet writer (packetizer.go) asks whether an ACK is due and builds
// the frame.

import (
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// maxTrackedRanges bounds the ranges of received packet numbers a space
// remembers. Beyond it the oldest range is forgotten and packets below the
// new floor are treated as duplicates, which bounds memory against a peer
// that skips packet numbers (RFC 9000 section 13.2.3).
const maxTrackedRanges = 512

// ackState is the receive side of one packet number space: the packet
// numbers received, for duplicate detection and ACK frames, and when the
// next ACK frame is due (RFC 9000 section 13.2).
type ackState struct {
	received rangeSet
	// floor: packets below it are duplicates or too old to track.
	floor uint64

	hasLargest  bool
	largest     uint64        // largest packet number received
	largestTime time.Duration // when it arrived, for the ACK Delay field

	// unacked: packets arrived since the last ACK frame was sent.
	unacked bool
	// eliciting counts ack-eliciting packets since the last ACK frame,
	// sinceAck all packets.
	eliciting int
	sinceAck  int
	// immediate: an ACK should go out without delay.
	immediate bool
	// deadline is when the delayed ACK is due (hasDeadline).
	deadline    time.Duration
	hasDeadline bool

	// peerAcked is the largest Largest Acknowledged of our ACK frames
	// that the peer acknowledged: ranges at or below it need no report.
	peerAcked    uint64
	hasPeerAcked bool

	// sentLargest is the Largest Acknowledged of the last ACK frame
	// sent (hasSent): a lost ACK frame older than it needs no repeat.
	sentLargest uint64
	hasSent     bool
	// resend: an ACK frame was lost and what it reported must go out
	// again, with the next packet sent (RFC 9000 section 13.3).
	resend bool
	// sentAt is when the last ACK frame went out (hasSentAt).
	sentAt    time.Duration
	hasSentAt bool
}

// ackPolicy is what decides when ACK frames go out in a space.
type ackPolicy struct {
	// immediate: acknowledge every ack-eliciting packet at once, as
	// Initial and Handshake packets are (RFC 9000 section 13.2.1).
	immediate bool
	// maxDelay is our max_ack_delay.
	maxDelay time.Duration
	// threshold is the number of ack-eliciting packets that trigger an
	// ACK (RFC 9000 section 13.2.2 recommends 2).
	threshold int
	// peerReorder: the peer's Reordering Threshold, reorder, decides
	// which out-of-order packets are acknowledged at once
	// (draft-ietf-quic-ack-frequency section 6.2), instead of RFC 9000
	// section 13.2.1's rule.
	peerReorder bool
	reorder     uint64
	// quietAfter, if set, acknowledges at once an ack-eliciting packet
	// that arrives when no ACK frame went out for that long: after an
	// idle period the peer's RTT estimate needs a fresh sample
	// (draft-ietf-quic-ack-frequency section 6.1).
	quietAfter time.Duration
}

// isDuplicate reports whether pn was received before or is too old.
func (a *ackState) isDuplicate(pn uint64) bool {
	return pn < a.floor || a.received.contains(pn)
}

// largestReceived is the largest packet number received, the base of
// packet number decoding (RFC 9000 appendix A.3), or
// wire.InvalidPacketNumber before the first.
func (a *ackState) largestReceived() uint64 {
	if !a.hasLargest {
		return wire.InvalidPacketNumber
	}
	return a.largest
}

// onPacket records a packet that was processed (RFC 9000 section 13.2.1).
func (a *ackState) onPacket(now time.Duration, pn uint64, ackEliciting bool, p ackPolicy) {
	outOfOrder := a.hasLargest && (pn < a.largest || pn > a.largest+1)
	a.received.add(pn, pn+1)
	for a.received.count() > maxTrackedRanges {
		a.floor = a.received.first().hi
		a.received.dropLowest()
	}
	if !a.hasLargest || pn > a.largest {
		a.largest, a.largestTime, a.hasLargest = pn, now, true
	}
	if p.peerReorder {
		outOfOrder = a.reorderDue(pn, p.reorder)
	}
	a.unacked = true
	a.sinceAck++
	if !ackEliciting {
		return
	}
	a.eliciting++
	quiet := p.quietAfter > 0 && a.hasSentAt && now-a.sentAt > p.quietAfter
	switch {
	case p.immediate, outOfOrder, quiet, a.eliciting >= p.threshold:
		// Section 13.2.1: out-of-order packets are acknowledged at
		// once, so that the peer detects the loss quickly.
		a.immediate = true
	case !a.hasDeadline:
		a.deadline, a.hasDeadline = now+p.maxDelay, true
	}
}

// reorderDue reports whether packet pn, just recorded, is acknowledged at
// once under the peer's Reordering Threshold r (draft-ietf-quic-ack-frequency
// section 6.2): never when r is 0; else when pn is at or below Largest
// Acked - r (the peer may have declared it lost: this ACK shows the loss
// was spurious), or when the smallest packet still missing above Largest
// Acked - r (the Largest Reported Missing) is r or more below the largest
// received, so that the peer can declare it lost now. Largest Acked is
// the Largest Acknowledged of the last ACK frame sent; before the first,
// every missing packet is unreported. The largest received packet stands
// for the draft's largest ack-eliciting one.
func (a *ackState) reorderDue(pn, r uint64) bool {
	if r == 0 {
		return false
	}
	from := a.floor
	if a.hasSent {
		if a.sentLargest >= r && pn <= a.sentLargest-r {
			return true
		}
		if a.sentLargest+1 > r {
			from = max(from, a.sentLargest+1-r)
		}
	}
	missing, ok := a.received.firstGapFrom(from)
	return ok && a.largest-missing >= r
}

// ackNow makes the next ACK frame go out without delay.
func (a *ackState) ackNow() {
	if a.unacked {
		a.immediate = true
	}
}

// due reports whether an ACK frame must be sent now.
func (a *ackState) due(now time.Duration) bool {
	return a.unacked && (a.immediate || (a.hasDeadline && now >= a.deadline))
}

// piggyback reports whether an ACK frame is worth adding to a packet sent
// anyway: an ack-eliciting packet waits for one, or enough packets that
// elicit none (the peer's own ACKs) arrived that acknowledging them lets
// the peer prune its ACK ranges (RFC 9000 section 13.2.4).
func (a *ackState) piggyback() bool {
	return a.unacked && (a.eliciting > 0 || a.sinceAck >= piggybackEvery || a.resend)
}

// unconfirmed reports whether packets were received that the peer may not
// know were acknowledged: no ACK frame of ours reporting the largest one
// was acknowledged. A probe of a handshake space carries an ACK frame
// then, since the ACK frames sent before may be what was lost.
func (a *ackState) unconfirmed() bool {
	return a.hasLargest && !(a.hasPeerAcked && a.largest <= a.peerAcked)
}

// piggybackEvery is how many non-ack-eliciting packets are acknowledged
// together when nothing else asks for an ACK.
const piggybackEvery = 16

// timer returns when a delayed ACK falls due.
func (a *ackState) timer() (time.Duration, bool) {
	if !a.unacked {
		return 0, false
	}
	if a.immediate {
		return 0, true
	}
	return a.deadline, a.hasDeadline
}

// buildFrame fills f with the ranges to report, newest first, at most
// maxRanges of them, and the ACK Delay in units of 2^exponent
// microseconds.
func (a *ackState) buildFrame(f *wire.AckFrame, now time.Duration, exponent uint8, maxRanges int) bool {
	if !a.hasLargest || a.received.empty() {
		return false
	}
	f.Ranges = f.Ranges[:0]
	f.HasECN = false
	for i := a.received.count() - 1; i >= 0 && len(f.Ranges) < maxRanges; i-- {
		sp := a.received.s[i]
		if len(f.Ranges) > 0 && a.hasPeerAcked && sp.hi-1 <= a.peerAcked {
			// The peer knows these were acknowledged (section 13.2.4).
			break
		}
		f.Ranges = append(f.Ranges, wire.AckRange{Smallest: sp.lo, Largest: sp.hi - 1})
	}
	f.AckDelay = wire.EncodeAckDelay(now-a.largestTime, exponent)
	return true
}

// onAckSentAt records that an ACK frame went out at now (onAckSent).
func (a *ackState) onAckSentAt(now time.Duration) {
	a.sentAt, a.hasSentAt = now, true
	a.onAckSent()
}

// onAckSent resets the delayed ACK state after an ACK frame was sent; its
// Largest Acknowledged is the largest packet number received.
func (a *ackState) onAckSent() {
	a.sentLargest, a.hasSent = a.largest, true
	a.resend = false
	a.unacked = false
	a.eliciting = 0
	a.sinceAck = 0
	a.immediate = false
	a.hasDeadline = false
}

// onAckAcked records that the peer received an ACK frame whose Largest
// Acknowledged was largest: older ranges need not be reported again.
func (a *ackState) onAckAcked(largest uint64) {
	if !a.hasPeerAcked || largest > a.peerAcked {
		a.peerAcked, a.hasPeerAcked = largest, true
	}
}

// onAckLost handles the loss of a packet that carried an ACK frame whose
// Largest Acknowledged was largest. RFC 9000 section 13.3 has the
// information of a lost ACK frame sent again in a new one, with the
// current ranges. No repeat is needed when the peer acknowledged an ACK
// frame that covers it, or when a newer ACK frame went out after it (its
// own loss would be reported in turn). Otherwise the ACK rides on the next
// packet sent and is due at once in the handshake spaces, whose peer
// otherwise never learns its packets arrived, or within max_ack_delay.
func (a *ackState) onAckLost(now time.Duration, largest uint64, p ackPolicy) {
	if !a.hasLargest || (a.hasPeerAcked && largest <= a.peerAcked) {
		return
	}
	if a.hasSent && largest < a.sentLargest {
		return
	}
	a.unacked, a.resend = true, true
	switch {
	case p.immediate:
		a.immediate = true
	case !a.hasDeadline:
		a.deadline, a.hasDeadline = now+p.maxDelay, true
	}
}
