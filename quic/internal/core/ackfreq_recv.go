package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// The receiving side of the ACK frequency extension
// (draft-ietf-quic-ack-frequency-14): once the peer sent an ACK_FREQUENCY
// frame, its values replace this endpoint's own ACK policy in the
// application space (ackrate.go's rate-based threshold included), until a
// frame with a larger sequence number replaces them (section 4). The ACK
// rules they drive are ackState's (ack.go): the threshold and delay, the
// reordering threshold (section 6.2), and the CE transition (section 6.3).

// maxPeerThreshold bounds the packets per ACK a peer can ask for, so that
// the count stays an int on any platform; beyond it the requested max ack
// delay and the reordering threshold decide anyway.
const maxPeerThreshold = 1 << 20

// ackFreqRecv is what the peer asked for.
type ackFreqRecv struct {
	// minAckDelay is the min_ack_delay this endpoint advertised, in
	// whole microseconds as sent; a request below it is invalid.
	minAckDelay time.Duration

	// inForce: an ACK_FREQUENCY frame was processed; seq is the largest
	// sequence number processed.
	inForce bool
	seq     uint64
	// threshold is the ack-eliciting packets that trigger an ACK: the
	// frame's Ack-Eliciting Threshold plus one, as the draft's ACK goes
	// out after more than that many (section 6).
	threshold int
	maxDelay  time.Duration
	reorder   uint64

	// immediate: the packet being processed carried IMMEDIATE_ACK.
	immediate bool
	// lastCE: the last application packet received was CE-marked.
	lastCE bool

	framesReceived, immediateReceived uint64
}

// onAckFrequency applies an ACK_FREQUENCY frame, or ignores it when its
// sequence number is not above the largest processed (section 4). A
// requested max ack delay below min_ack_delay is a PROTOCOL_VIOLATION;
// the wire parser rejected 2^14 ms and more already.
func (r *ackFreqRecv) onAckFrequency(f *wire.AckFrequencyFrame) error {
	if f.RequestedMaxAckDelay < r.minAckDelay {
		return transportError(wire.CodeProtocolViolation, f.Type(),
			"requested max ack delay %v below min_ack_delay %v", f.RequestedMaxAckDelay, r.minAckDelay)
	}
	r.framesReceived++
	if r.inForce && f.SequenceNumber <= r.seq {
		return nil
	}
	r.inForce, r.seq = true, f.SequenceNumber
	r.threshold = int(min(f.AckElicitingThreshold, maxPeerThreshold)) + 1
	r.maxDelay = f.RequestedMaxAckDelay
	r.reorder = f.ReorderingThreshold
	return nil
}

// onImmediateAck notes an IMMEDIATE_ACK: the packet is acknowledged at
// once (section 5).
func (r *ackFreqRecv) onImmediateAck() {
	r.immediateReceived++
	r.immediate = true
}

// takeImmediate reports and clears an IMMEDIATE_ACK of the packet just
// processed.
func (r *ackFreqRecv) takeImmediate() bool {
	i := r.immediate
	r.immediate = false
	return i
}

// ceAckNow reports whether an application packet whose CE mark is ce
// calls for an ACK at once: every CE-marked one by RFC 9000 section
// 13.2.1, but only a change from unmarked to marked once the peer asked
// for more than one packet per ACK (Ack-Eliciting Threshold above 1,
// draft section 6.3).
func (r *ackFreqRecv) ceAckNow(ce bool) bool {
	prev := r.lastCE
	r.lastCE = ce
	if !r.inForce || r.threshold <= 2 {
		return ce
	}
	return ce && !prev
}

// policy is the application space's ACK policy the peer asked for; srtt
// is this endpoint's smoothed RTT: an ack-eliciting packet after a round
// trip without any ACK sent is acknowledged at once (section 6.1), since
// the peer's request may otherwise hold it for its whole delay.
func (r *ackFreqRecv) policy(srtt time.Duration) ackPolicy {
	return ackPolicy{maxDelay: r.maxDelay, threshold: r.threshold, peerReorder: true, reorder: r.reorder, quietAfter: srtt}
}
