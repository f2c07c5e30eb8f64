package core

import (
	"testing"
	"time"
)

// TestRecvWindowDoublesOnLongPath: on a 650 ms path whose sender is held
// only by flow control (it sends whatever credit it has at once, and the
// data arrives and is read a round trip after the limit was advertised),
// the data a round trip carries at least doubles from one round trip to
// the next until the window reaches its maximum, the 160 MiB default, from
// a server's and from a client's initial window. Slower growth would make
// flow control, not the congestion window, set the pace of a 1 Gbit/s x
// 650 ms path's start.
func TestRecvWindowDoublesOnLongPath(t *testing.T) {
	const (
		srtt  = 650 * time.Millisecond
		steps = 64 // per round trip
		tick  = srtt / steps
	)
	for _, initial := range []uint64{DefaultInitialStreamReceiveWindow, DefaultClientInitialStreamReceiveWindow} {
		w := newRecvWindow(initial, DefaultMaxStreamReceiveWindow, 0)
		// limits[i] is the limit advertised at step i: what the sender
		// may have sent by then, read a round trip later.
		limits := []uint64{w.limit}
		var consumed, roundStart, lastRound uint64
		for i := 1; w.window < w.max; i++ {
			if i > 100*steps {
				t.Fatalf("initial %d: window %d after 100 round trips", initial, w.window)
			}
			now := time.Duration(i) * tick
			if i >= steps {
				consumed = max(consumed, limits[i-steps])
			}
			w.observe(consumed, now, srtt)
			if w.shouldUpdate(consumed) {
				w.update(consumed, now, srtt)
			}
			limits = append(limits, w.limit)
			if i%steps == 0 {
				round := consumed - roundStart
				if lastRound > 0 && round < 2*lastRound && w.window < w.max {
					t.Fatalf("initial %d, round trip %d: %d bytes after %d, less than double (window %d)",
						initial, i/steps, round, lastRound, w.window)
				}
				lastRound, roundStart = round, consumed
			}
		}
	}
}
