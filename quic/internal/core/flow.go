package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// recvWindow is the receive side of flow control for a stream or the
// connection (RFC 9000 section 4): the limit advertised to the peer, and the
// window that moves it as the application consumes data.
//
// The window tunes itself so that it never limits a sender whose data the
// application reads at once, without a large default: it is kept at
// windowRTTs round trips of what the application consumed in the last
// round trip (a sender in slow start doubles its rate each round trip, and
// an update takes half a round trip to reach it), and it doubles when half a
// window was consumed in under two round trips. It never exceeds max, the
// memory the receiver commits.
type recvWindow struct {
	limit  uint64 // largest offset the peer may send (advertised)
	window uint64
	max    uint64

	epochStart time.Duration // when the last limit was advertised
	epochOff   uint64        // consumed offset at that time

	// Consumption over the last round trip.
	rttStart time.Duration
	rttOff   uint64
	lastRTT  uint64
	long     bool // the last srtt was a long path's (longPathWindowRTTs)
}

// windowRTTs is how many round trips of consumption the window holds. The
// consumption measured lags the sender by a round trip and the update
// reaches it half a round trip later; in slow start the sender's rate has
// grown about 2^2.5 times by then, and it doubles again in the next round.
const windowRTTs = 8

// longPathWindowRTTs replaces windowRTTs on a path whose smoothed RTT is
// at least recovery.DefaultLongRTTMin: there a satquic sender grows about
// sevenfold per round trip (recovery.LongRTTConfig), in trains a round
// trip apart, and 32 round trips keep the window ahead of it.
const longPathWindowRTTs = 32

func newRecvWindow(initial, maxWindow uint64, now time.Duration) recvWindow {
	return recvWindow{limit: initial, window: initial, max: maxWindow, epochStart: now, rttStart: now}
}

// observe records the consumed offset, measuring the consumption of each
// round trip, or the pace of the current one once an eighth of it has
// passed, when that is faster: a long-path sender jumps from its first
// flight to the path's bandwidth-delay product (recovery.LongRTTConfig),
// and a round trip's count would see the jump a round trip late. On
// geo-lossy (250 Mbit/s x 600 ms, BBR, 100 MB with FEC, seed 1,
// TestSimTraceDownload) the first update then kept the initial window,
// which a lost packet holding the read offset back for a round trip used
// up: 6.49 s, and 5.27 s with the window raised at the first update (5.26
// s with the windows at their maximum from the start).
func (w *recvWindow) observe(consumed uint64, now, srtt time.Duration) {
	w.long = srtt >= recovery.DefaultLongRTTMin
	elapsed := now - w.rttStart
	if elapsed <= 0 || srtt <= 0 {
		return
	}
	// Scaled to one round trip: reads may be far apart.
	read := consumed - min(w.rttOff, consumed)
	perRTT := uint64(float64(read) * float64(srtt) / float64(elapsed))
	switch {
	case elapsed >= srtt:
		w.lastRTT = perRTT
		w.rttStart, w.rttOff = now, consumed
	case elapsed >= srtt/8:
		w.lastRTT = max(w.lastRTT, perRTT)
	}
}

// target is the window the last round trip's consumption calls for.
func (w *recvWindow) target() uint64 {
	if w.long {
		return min(longPathWindowRTTs*w.lastRTT, w.max)
	}
	return min(windowRTTs*w.lastRTT, w.max)
}

// shouldUpdate reports whether a larger limit should be advertised: less
// than half a window of credit is left, or the consumption rate calls for a
// window twice as large (RFC 9000 section 4.2 leaves the timing to the
// receiver).
func (w *recvWindow) shouldUpdate(consumed uint64) bool {
	left := w.limit - min(consumed, w.limit)
	return left < w.window/2 || left < w.target()/2
}

// update auto-tunes the window and moves the limit to consumed + window.
// It returns the new limit.
func (w *recvWindow) update(consumed uint64, now, srtt time.Duration) uint64 {
	read := consumed - min(w.epochOff, consumed)
	elapsed := now - w.epochStart
	if w.window < w.max && read > 0 && w.window > 0 {
		// Half a window in under two RTTs: the window limits the sender.
		if elapsed < time.Duration(float64(4*srtt)*float64(read)/float64(w.window)) {
			w.window = min(2*w.window, w.max)
		}
		w.window = max(w.window, w.target())
	}
	w.epochStart, w.epochOff = now, consumed
	w.limit = max(w.limit, consumed+w.window)
	return w.limit
}

// grow raises the window to at least n (never above max): the connection
// window follows the largest stream window.
func (w *recvWindow) grow(n uint64) {
	w.window = max(w.window, min(n, w.max))
}

// connFlow is connection-level flow control (RFC 9000 section 4.1).
type connFlow struct {
	// Sending: the peer's MAX_DATA and the stream bytes sent against it.
	sendMax      uint64
	sent         uint64
	blockedAt    uint64 // limit of the last DATA_BLOCKED queued
	blockedQueue bool

	// Receiving: the highest offsets received on all streams add up to
	// received; consumed counts what the application read or what was
	// discarded.
	recv          recvWindow
	received      uint64
	consumed      uint64
	limitPending  bool // a MAX_DATA frame should be sent
	advertisedMax uint64
}

func (f *connFlow) init(cfg *Config) {
	f.recv = newRecvWindow(cfg.InitialConnReceiveWindow, cfg.MaxConnReceiveWindow, 0)
	f.advertisedMax = f.recv.limit
}

// sendCredit is how many new stream bytes the connection may still send.
func (f *connFlow) sendCredit() uint64 { return f.sendMax - min(f.sent, f.sendMax) }

// noteBlocked queues DATA_BLOCKED when the connection's limit keeps
// stream data back, once per limit (RFC 9000 section 4.1).
func (f *connFlow) noteBlocked() {
	if f.sendCredit() == 0 && f.blockedAt != f.sendMax {
		f.blockedAt, f.blockedQueue = f.sendMax, true
	}
}

// hasFrames reports whether MAX_DATA or DATA_BLOCKED is to be sent.
func (f *connFlow) hasFrames() bool { return f.limitPending || f.blockedQueue }

// onMaxData raises the send limit (RFC 9000 section 19.9: a smaller value
// is ignored).
func (f *connFlow) onMaxData(maximum uint64) bool {
	if maximum <= f.sendMax {
		return false
	}
	f.sendMax = maximum
	return true
}

// onConsumed accounts for bytes the application read (or that a reset
// released) and queues MAX_DATA when the window calls for it.
func (f *connFlow) onConsumed(n uint64, now, srtt time.Duration) {
	f.consumed += n
	f.recv.observe(f.consumed, now, srtt)
	if f.recv.shouldUpdate(f.consumed) {
		f.advertisedMax = f.recv.update(f.consumed, now, srtt)
		f.limitPending = true
	}
}
