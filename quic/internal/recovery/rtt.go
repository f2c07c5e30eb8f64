package recovery

import "time"

// RTTStats is the RTT estimator of RFC 9002 section 5 and appendix A.7. All
// values are zero-based durations; before the first sample SmoothedRTT is
// the configured initial RTT and RTTVar half of it (section 6.2.2).
type RTTStats struct {
	latest, min, smoothed, variance time.Duration
	// adjusted is the latest sample less the ack delay, at least min.
	adjusted    time.Duration
	maxAckDelay time.Duration
	hasSample   bool
	// firstSampleTime is when the first sample was taken; persistent
	// congestion only considers packets sent after it (section 7.6.2).
	firstSampleTime time.Duration
}

func newRTTStats(initial, maxAckDelay time.Duration) RTTStats {
	return RTTStats{smoothed: initial, variance: initial / 2, maxAckDelay: maxAckDelay}
}

// LatestRTT is the most recent sample, without ack delay adjustment; zero
// before the first sample.
func (r *RTTStats) LatestRTT() time.Duration { return r.latest }

// AdjustedRTT is the most recent sample less the peer's reported ack
// delay (bounded as section 5.3 bounds it), and never below min_rtt; zero
// before the first sample. Unlike the adjustment of section 5.3, which
// keeps a sample whole when subtracting the delay would take it below
// min_rtt, it subtracts what it can: a delay-based slow start exit reads
// it, and a peer that delays each ACK by max_ack_delay must not look like
// a queue of that size.
func (r *RTTStats) AdjustedRTT() time.Duration { return r.adjusted }

// MinRTT is the smallest sample seen, never adjusted for ack delay
// (section 5.2); zero before the first sample.
func (r *RTTStats) MinRTT() time.Duration { return r.min }

// SmoothedRTT is the exponentially weighted moving average (section 5.3).
func (r *RTTStats) SmoothedRTT() time.Duration { return r.smoothed }

// RTTVar is the mean deviation of the samples (section 5.3).
func (r *RTTStats) RTTVar() time.Duration { return r.variance }

// HasSample reports whether at least one sample was taken.
func (r *RTTStats) HasSample() bool { return r.hasSample }

// FirstSampleTime is when the first sample was taken; meaningful only when
// HasSample.
func (r *RTTStats) FirstSampleTime() time.Duration { return r.firstSampleTime }

// MaxAckDelay is the peer's max_ack_delay in use.
func (r *RTTStats) MaxAckDelay() time.Duration { return r.maxAckDelay }

// update folds a sample into the estimate (appendix A.7, UpdateRtt).
// latest is ack time minus the send time of the largest newly acknowledged
// packet; ackDelay is the peer's reported delay, already zero where the
// caller chooses to ignore it (Initial space).
func (r *RTTStats) update(now, latest, ackDelay time.Duration, handshakeConfirmed bool) {
	if latest <= 0 {
		// A clock that did not advance still proves one round trip; keep
		// the estimator positive so that timers and rates stay defined.
		latest = time.Nanosecond
	}
	r.latest = latest
	if !r.hasSample {
		// Section 5.3: the first sample initializes the estimator.
		r.hasSample = true
		r.firstSampleTime = now
		r.min = latest
		r.adjusted = latest
		r.smoothed = latest
		r.variance = latest / 2
		return
	}
	// Section 5.2: min_rtt ignores ack delay.
	r.min = min(r.min, latest)
	if handshakeConfirmed {
		// Section 5.3: after confirmation, use the lesser of the reported
		// delay and max_ack_delay; before, the delay may exceed it.
		ackDelay = min(ackDelay, r.maxAckDelay)
	}
	adjusted := latest
	// Section 5.3: never subtract the delay below min_rtt.
	if ackDelay > 0 && latest >= r.min+ackDelay {
		adjusted = latest - ackDelay
	}
	r.adjusted = max(latest-max(ackDelay, 0), r.min)
	r.variance = (3*r.variance + absDuration(r.smoothed-adjusted)) / 4
	r.smoothed = (7*r.smoothed + adjusted) / 8
}

// ptoBase is smoothed_rtt + max(4*rttvar, kGranularity), the PTO period
// before max_ack_delay and backoff (section 6.2.1).
func (r *RTTStats) ptoBase(granularity time.Duration) time.Duration {
	return r.smoothed + max(4*r.variance, granularity)
}

// PersistentCongestionDuration is (smoothed_rtt + max(4*rttvar,
// kGranularity) + max_ack_delay) * kPersistentCongestionThreshold (section
// 7.6.1): max_ack_delay counts whatever the space of the lost packets.
func (r *RTTStats) PersistentCongestionDuration(granularity time.Duration, threshold int) time.Duration {
	return (r.ptoBase(granularity) + r.maxAckDelay) * time.Duration(threshold)
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
