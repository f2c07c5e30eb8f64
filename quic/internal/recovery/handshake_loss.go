package recovery

import "time"

// handshakeLoss takes a loss of Initial or Handshake packets the way TCP
// takes a lost SYN or SYN-ACK (RFC 5681 section 3.1, RFC 6298 section 5):
// the window is reduced (by beta, RFC 9002 section 7.3.2) but slow start
// goes on, since a handshake flight of a few packets says nothing about
// the path's capacity. RFC 9002's rule would also set the slow start
// threshold to the reduced initial window, so that a single lost handshake
// datagram leaves the connection in congestion avoidance from about ten
// packets: on a 600 ms GEO path with 1% random loss, tens of seconds at a
// Mbit/s. It reports whether it handled the event; persistent congestion
// and 1-RTT losses go the usual way.
func (w *windowBase) handshakeLoss(now time.Duration, ev *CongestionEvent, beta float64) bool {
	if !ev.Handshake || ev.Persistent || ev.Cause != CauseLoss {
		return false
	}
	if w.inCongestionRecovery(ev.LargestSentTime) {
		return true
	}
	w.recoveryStart, w.recoveryValid, w.inRecovery = now, true, true
	w.reductions++
	w.setWindow(int64(float64(w.cwnd) * beta))
	return true
}
