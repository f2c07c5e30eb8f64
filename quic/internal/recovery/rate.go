package recovery

import (
	"math/bits"
	"time"
)

// RateSample is one delivery-rate sample
// (draft-cheng-iccrg-delivery-rate-estimation section 3.3): how many bytes
// were delivered over what interval, measured from the newest packet the
// ACK acknowledged. BBR builds its bandwidth model from these samples.
type RateSample struct {
	// HasData: the ACK acknowledged at least one in-flight packet.
	HasData bool
	// Valid: Interval and DeliveryRate are meaningful (the interval is
	// at least the minimum RTT, section 3.3).
	Valid bool
	// DeliveryRate is Delivered / Interval in bytes per second.
	DeliveryRate uint64
	// Delivered is the number of bytes delivered over Interval.
	Delivered int64
	// Interval is max(SendElapsed, AckElapsed).
	Interval time.Duration
	// PriorDelivered and PriorTime are the connection's delivered count
	// and delivered time when the newest acknowledged packet was sent.
	PriorDelivered int64
	PriorTime      time.Duration
	SendElapsed    time.Duration
	AckElapsed     time.Duration
	// IsAppLimited: the newest acknowledged packet was sent while the
	// sender was application limited, so the rate may underestimate the
	// path.
	IsAppLimited bool
	// RTT is the time from sending the newest acknowledged packet to now.
	RTT time.Duration
	// NewlyAcked and NewlyLost are the bytes this ACK acknowledged and
	// declared lost.
	NewlyAcked, NewlyLost int64
	// TxInFlight is the bytes in flight when the newest acknowledged
	// packet was sent, and Lost the bytes lost since then (BBR's
	// inflight_hi model).
	TxInFlight int64
	Lost       int64
}

// rateSampler is the connection-wide state of the delivery-rate estimator
// (section 3.1: C.delivered, C.delivered_time, C.first_sent_time,
// C.app_limited) and the sample being built for the current ACK.
type rateSampler struct {
	delivered     int64
	deliveredTime time.Duration
	firstSentTime time.Duration
	// appLimited is C.app_limited: the delivered count that, once passed,
	// ends the application-limited phase; zero when not limited.
	appLimited int64
	lost       int64

	rs         RateSample
	newestSent time.Duration
	priorLost  int64
}

// onSent snapshots the connection state into p (section 3.2, upon sending).
func (r *rateSampler) onSent(p *sentPacket, now time.Duration, priorInFlight int64) {
	if priorInFlight == 0 {
		r.firstSentTime = now
		r.deliveredTime = now
	}
	p.firstSentTime = r.firstSentTime
	p.deliveredTime = r.deliveredTime
	p.delivered = r.delivered
	p.lost = r.lost
	p.txInFlight = priorInFlight + int64(p.bytes)
	if r.appLimited != 0 {
		p.flags |= flagAppLimited
	}
}

// begin starts the sample of a new ACK.
func (r *rateSampler) begin() {
	r.rs = RateSample{}
}

// onDelivered folds a newly delivered packet into the sample (section 3.3,
// UpdateRateSample). Packets are given in send order within a space, so the
// newest by send time wins; equal times keep the later call.
func (r *rateSampler) onDelivered(p *sentPacket, now time.Duration) {
	r.delivered += int64(p.bytes)
	r.deliveredTime = now
	r.rs.NewlyAcked += int64(p.bytes)
	if r.rs.HasData && p.timeSent < r.newestSent {
		return
	}
	r.rs.HasData = true
	r.newestSent = p.timeSent
	r.rs.PriorDelivered = p.delivered
	r.rs.PriorTime = p.deliveredTime
	r.rs.IsAppLimited = p.has(flagAppLimited)
	r.rs.SendElapsed = p.timeSent - p.firstSentTime
	r.rs.AckElapsed = r.deliveredTime - p.deliveredTime
	r.rs.RTT = now - p.timeSent
	r.rs.TxInFlight = p.txInFlight
	r.priorLost = p.lost
	r.firstSentTime = p.timeSent
}

// onLost counts lost bytes for BBR's loss model.
func (r *rateSampler) onLost(bytes int64) {
	r.lost += bytes
	r.rs.NewlyLost += bytes
}

// finish computes the sample (section 3.3, GenerateRateSample). minRTT is
// zero before the first RTT sample.
func (r *rateSampler) finish(minRTT time.Duration) RateSample {
	if r.appLimited != 0 && r.delivered > r.appLimited {
		r.appLimited = 0
	}
	rs := &r.rs
	if !rs.HasData {
		return *rs
	}
	rs.Lost = r.lost - r.priorLost
	rs.Interval = max(rs.SendElapsed, rs.AckElapsed)
	rs.Delivered = r.delivered - rs.PriorDelivered
	// An interval shorter than the minimum RTT would overestimate the
	// rate (ACK compression, spurious retransmission).
	if rs.Interval <= 0 || rs.Interval < minRTT || rs.Delivered <= 0 {
		return *rs
	}
	rs.Valid = true
	rs.DeliveryRate = mulDivSat(uint64(rs.Delivered), uint64(time.Second), uint64(rs.Interval))
	return *rs
}

// markAppLimited is section 3.4's CheckIfApplicationLimited once the core
// has found nothing to send.
func (r *rateSampler) markAppLimited(bytesInFlight int64) {
	r.appLimited = max(r.delivered+bytesInFlight, 1)
}

// mulDivSat returns a*b/c rounded down, saturated at the largest uint64.
func mulDivSat(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return ^uint64(0)
	}
	q, _ := bits.Div64(hi, lo, c)
	return q
}
