package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// ACK frequency on fast paths. RFC 9000 section 13.2.2 asks for an ACK
// every second ack-eliciting packet. On an asymmetric satellite path that
// floods the return link: 250 Mbit/s down is 21,000 packets/s, and an ACK
// for every second one is 10,000 ACKs/s, which a 3 Mbit/s return link
// cannot carry; the ACKs queue, the RTT grows by hundreds of
// milliseconds and the sender's ACK clock caps the transfer
// (draft-kuhn-quic-4-sat recommends fewer ACKs on such links). So the
// threshold grows with the packets received per round trip, keeping at
// least ackTargetPerRTT ACKs per round trip (enough RTT samples and ACK
// clock for slow start and loss detection), up to ackMaxThreshold. Out
// of order packets, CE marks and max_ack_delay still bring an ACK at once
// or on time.

// ackTargetPerRTT is the fewest ACKs per round trip the rate-based
// threshold aims at.
const ackTargetPerRTT = 256

// ackMaxThreshold caps the rate-based threshold.
const ackMaxThreshold = 32

// ackRate estimates the 1-RTT packets received per round trip: the count
// of the last whole round trip, or the pace of the current one when it is
// faster (in slow start the rate grows several times per round trip, and
// the last round's count would lag).
type ackRate struct {
	start  time.Duration
	count  int
	perRTT int
}

// onPacket counts a packet received at now; rtt is the smoothed RTT.
func (r *ackRate) onPacket(now, rtt time.Duration) {
	r.count++
	if rtt <= 0 {
		return
	}
	elapsed := now - r.start
	if elapsed >= rtt {
		r.perRTT = r.count
		r.count = 0
		r.start = now
		return
	}
	if elapsed > 0 && elapsed >= rtt/8 {
		// elapsed > 0: an RTT under 8 ns (two ends back to back in
		// virtual time) would otherwise divide by zero.
		r.perRTT = max(r.perRTT, int(int64(r.count)*int64(rtt)/int64(elapsed)))
	}
}

// threshold is the ACK threshold in force given the configured one.
func (r *ackRate) threshold(configured int) int {
	return max(configured, min(r.perRTT/ackTargetPerRTT, ackMaxThreshold))
}

// policy is the ACK policy of space s for a packet received at now.
// Initial and Handshake packets are acknowledged at once (RFC 9000 section
// 13.2.1); 1-RTT packets as the peer asked in an ACK_FREQUENCY frame
// (peer, ackfreq_recv.go), or else after cfg.AckElicitingThreshold of
// them, or more on fast paths, where the packet is counted for the rate
// (rtt gives the smoothed RTT).
func (r *ackRate) policy(now time.Duration, s recovery.Space, cfg *Config, rtt *recovery.RTTStats, peer *ackFreqRecv) ackPolicy {
	if s == spaceApp && peer.inForce {
		return peer.policy(rtt.SmoothedRTT())
	}
	threshold := cfg.AckElicitingThreshold
	if s == spaceApp && !cfg.NoAckRateAdaptation {
		r.onPacket(now, rtt.SmoothedRTT())
		threshold = r.threshold(threshold)
	}
	return ackPolicy{
		immediate: s != spaceApp,
		maxDelay:  cfg.MaxAckDelay,
		threshold: threshold,
	}
}

// lostAckPolicy is how soon the information of a lost ACK frame of space
// s goes out again: at once in the handshake spaces, as their packets are
// acknowledged (RFC 9000 section 13.2.1), else within max_ack_delay, the
// one the peer asked for if it did. It leaves the rate adaptation alone,
// which counts received packets.
func lostAckPolicy(s recovery.Space, cfg *Config, peer *ackFreqRecv) ackPolicy {
	if s == spaceApp && peer.inForce {
		return ackPolicy{maxDelay: peer.maxDelay}
	}
	return ackPolicy{immediate: s != spaceApp, maxDelay: cfg.MaxAckDelay}
}
