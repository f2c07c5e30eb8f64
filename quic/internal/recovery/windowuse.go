package recovery

import "time"

// windowUse remembers how full the congestion window was over the last
// round trips, to decide whether acknowledgements of packets sent after
// an application-limited moment may grow the window.
//
// RFC 9002 section 7.8 forbids growth while the window is underused:
// bytes in flight below the window and not pacing limited. The rate
// sampler marks every packet sent until the data in flight at such a
// moment is delivered as application limited (a whole round trip, as the
// delivery rate estimate needs: draft-cheng-iccrg-delivery-rate-estimation
// section 3.4). That marking is right for rate samples but too broad for
// the window: a server that answers a request a millisecond after its
// connection went idle fills its window with the response, yet every
// packet of that first round trip is marked, and the window would not
// grow for a round trip (on a 100 ms path, a tenth of a second lost at
// the start of every response). So a marked packet still grows the window
// when the window was in use during its round trip: bytes in flight
// reached half the window in slow start, where the window doubles on
// what half of it carried, or came within a few packets of it in
// congestion avoidance (the test Linux applies, tcp_is_cwnd_limited, and
// quic-go's isCwndLimited).
type windowUse struct {
	// peak is the largest bytes in flight after a send in the current
	// round, prevPeak in the one before; a round ends when a packet sent
	// after roundStart is acknowledged.
	peak, prevPeak int64
	roundStart     time.Duration
}

// windowUseSlack is how close to the window, in packets, bytes in flight
// must come in congestion avoidance for the window to count as used.
const windowUseSlack = 3

// onSent records the bytes in flight after a packet was sent.
func (u *windowUse) onSent(inFlight int64) {
	u.peak = max(u.peak, inFlight)
}

// onAck closes the round when the ACK acknowledged a packet sent after it
// began.
func (u *windowUse) onAck(now, largestSent time.Duration) {
	if largestSent > u.roundStart {
		u.prevPeak, u.peak = u.peak, 0
		u.roundStart = now
	}
}

// used reports whether the window was in use over the last round trips.
func (u *windowUse) used(cwnd, mds int, slowStart bool) bool {
	peak := max(u.peak, u.prevPeak)
	if slowStart {
		return 2*peak >= int64(cwnd)
	}
	return peak+int64(windowUseSlack*mds) >= int64(cwnd)
}
