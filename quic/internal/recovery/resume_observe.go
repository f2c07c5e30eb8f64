package recovery

import "time"

// pathRecord measures what Sender.SavablePathState reports: the largest
// delivery rate and the largest window in use over the recent round
// trips. Each is a maximum over two consecutive periods of
// pathRecordRounds smoothed RTTs, so a measurement is forgotten one to two
// periods after it was made and the saved state follows a path that
// slowed down.
type pathRecord struct {
	periodStart time.Duration
	started     bool
	// rate[0] and window[0] are the current period's maxima, [1] the
	// previous period's: bytes per second and bytes.
	rate   [2]uint64
	window [2]int64
}

// pathRecordRounds is the length of a period in smoothed RTTs: a few
// round trips of history, as BBR's bandwidth filter keeps (ten rounds).
const pathRecordRounds = 10

// onAck takes the ACK's delivery-rate sample and the window after it.
// Application-limited samples underestimate the path (RFC 9959 section
// 4.1) and count only if larger than what is known. The window counts if
// it was in use (bytes in flight before the ACK within a datagram of it)
// and the sender not application limited, halved in slow start where it
// may have overshot the path (section 4.1).
func (r *pathRecord) onAck(now time.Duration, ev *AckEvent, cwnd int, slowStart bool, mds int) {
	r.rotate(now, ev.RTT.SmoothedRTT())
	rs := &ev.Rate
	if rs.Valid && (!rs.IsAppLimited || rs.DeliveryRate > max(r.rate[0], r.rate[1])) {
		r.rate[0] = max(r.rate[0], rs.DeliveryRate)
	}
	if rs.HasData && !rs.IsAppLimited && ev.PriorInFlight+int64(mds) >= int64(cwnd) {
		w := int64(cwnd)
		if slowStart {
			w /= 2
		}
		r.window[0] = max(r.window[0], w)
	}
}

// rotate starts a new period when the current one is over.
func (r *pathRecord) rotate(now, srtt time.Duration) {
	if !r.started {
		r.periodStart, r.started = now, true
		return
	}
	if now-r.periodStart < pathRecordRounds*srtt {
		return
	}
	r.rate[1], r.window[1] = r.rate[0], r.window[0]
	r.rate[0], r.window[0] = 0, 0
	r.periodStart = now
}

// bytesPerRTT is the path's recent bytes per round trip of minRTT: the
// delivery rate times minRTT, or without a rate sample the window in use.
func (r *pathRecord) bytesPerRTT(minRTT time.Duration) int64 {
	if rate := max(r.rate[0], r.rate[1]); rate > 0 {
		return int64(min(mulDivSat(rate, uint64(minRTT), uint64(time.Second)), 1<<62))
	}
	return max(r.window[0], r.window[1])
}
