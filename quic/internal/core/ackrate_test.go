package core

import (
	"testing"
	"time"
)

// The ACK threshold stays RFC 9000's 2 on slow paths and grows to 32 on a
// 250 Mbit/s GEO path, from the pace of the current round trip already.
func TestAckRateThreshold(t *testing.T) {
	const rtt = 600 * time.Millisecond
	for _, tc := range []struct {
		name     string
		perSec   int
		want     int
		after    time.Duration
		wantPart int
	}{
		{"in-flight 5 Mbit/s", 430, 2, 100 * time.Millisecond, 2},
		{"GEO 50 Mbit/s", 4300, 10, 100 * time.Millisecond, 10},
		{"GEO 250 Mbit/s", 21500, 32, 100 * time.Millisecond, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r ackRate
			gap := time.Second / time.Duration(tc.perSec)
			now := time.Duration(0)
			// A partial round trip already sets the pace.
			for now < tc.after {
				now += gap
				r.onPacket(now, rtt)
			}
			if got := r.threshold(2); got != tc.wantPart {
				t.Errorf("after %v: threshold %d, want %d", tc.after, got, tc.wantPart)
			}
			for now < 2*rtt {
				now += gap
				r.onPacket(now, rtt)
			}
			if got := r.threshold(2); got != tc.want {
				t.Errorf("threshold %d, want %d", got, tc.want)
			}
			// A configured threshold above it wins.
			if got := r.threshold(40); got != 40 {
				t.Errorf("configured 40: threshold %d", got)
			}
		})
	}
	var r ackRate
	r.onPacket(time.Second, 0) // no RTT yet
	if got := r.threshold(2); got != 2 {
		t.Errorf("without an RTT: threshold %d", got)
	}
}

// An RTT of a few nanoseconds, as two ends back to back in virtual time
// measure, counts packets without dividing by a zero elapsed time.
func TestAckRateTinyRTT(t *testing.T) {
	var r ackRate
	for range 3 {
		r.onPacket(0, 5)
	}
	if r.count != 3 || r.perRTT != 0 {
		t.Errorf("count %d, perRTT %d; want 3 and 0", r.count, r.perRTT)
	}
}
