package recovery

import "time"

// noRTT marks an RTT minimum that has no sample yet (RFC 9406's
// "infinity").
const noRTT time.Duration = -1

// hystart is HyStart++ (RFC 9406): slow start that watches the minimum RTT
// of each round and, when it rises by a threshold, grows the window more
// slowly (Conservative Slow Start, CSS) until either the RTT falls back
// (resume slow start) or CSSRounds rounds pass (congestion avoidance).
//
// A round (section 4.2) ends when a packet sent after the round began is
// acknowledged. Packet numbers of different spaces cannot be compared, so
// rounds are counted on delivered bytes, as BBR does: the round ends when
// the newest acknowledged packet was sent after the connection had
// delivered roundEnd bytes.
type hystart struct {
	cfg HyStartConfig
	// enabled is cleared at the first congestion event: section 4.3 uses
	// HyStart++ only for the initial slow start.
	enabled bool
	// paced selects L = infinity; unpaced senders limit growth per ACK
	// to L = 8 packets (section 4.3).
	paced bool

	roundEnd        int64
	lastRoundMin    time.Duration
	currentRoundMin time.Duration
	samples         int
	// recent holds the last NRTTSample RTT samples (a ring at next), for
	// the trend check of checkSlowStart.
	recent []time.Duration
	next   int

	inCSS       bool
	cssBaseline time.Duration
	cssRounds   int
	// trendEntry: CSS began in this round on the recent samples, whose
	// minimum (not the round's) then tells whether the RTT fell back.
	trendEntry bool
}

func newHystart(cfg HyStartConfig, paced bool) hystart {
	return hystart{
		cfg:             cfg,
		enabled:         !cfg.Disabled,
		paced:           paced,
		lastRoundMin:    noRTT,
		currentRoundMin: noRTT,
		cssBaseline:     noRTT,
	}
}

// hystartUnpacedL is L for a sender that does not pace (section 4.3).
const hystartUnpacedL = 8

// onAck takes one ACK in slow start: n is the number of newly acknowledged
// bytes that may grow the window. It returns the growth to apply and
// whether slow start must end (ssthresh = cwnd, congestion avoidance).
func (h *hystart) onAck(ev *AckEvent, n int64, mds int) (grow int64, exit bool) {
	if !h.enabled {
		return n, false
	}
	if !h.paced {
		n = min(n, int64(hystartUnpacedL*mds))
	}
	if ev.Rate.HasData && ev.Rate.PriorDelivered >= h.roundEnd {
		if exit = h.startRound(ev.Delivered); exit {
			return 0, true
		}
	}
	if ev.HasRTTSample {
		h.sample(ev.RTT.LatestRTT())
	}
	// Section 4.2 grows the window by the phase the ACK arrived in, then
	// checks the RTT.
	if h.inCSS {
		grow = n / int64(h.cfg.CSSGrowthDivisor)
		h.checkCSS()
		return grow, false
	}
	h.checkSlowStart()
	return n, false
}

// startRound begins a round (section 4.2: lastRoundMinRTT takes the
// current minimum, which starts over). It reports whether CSS has run its
// CSSRounds rounds.
func (h *hystart) startRound(delivered int64) bool {
	h.roundEnd = delivered
	h.lastRoundMin = h.currentRoundMin
	h.currentRoundMin = noRTT
	h.samples = 0
	h.trendEntry = false
	if h.inCSS {
		h.cssRounds++
		if h.cssRounds >= h.cfg.CSSRounds {
			h.enabled = false
			h.inCSS = false
			return true
		}
	}
	return false
}

func (h *hystart) sample(rtt time.Duration) {
	if h.currentRoundMin == noRTT || rtt < h.currentRoundMin {
		h.currentRoundMin = rtt
	}
	h.samples++
	if n := h.cfg.NRTTSample; len(h.recent) < n {
		h.recent = append(h.recent, rtt)
	} else {
		h.recent[h.next] = rtt
		h.next = (h.next + 1) % n
	}
}

// recentMin is the smallest of the last NRTTSample samples, or noRTT
// before there are that many.
func (h *hystart) recentMin() time.Duration {
	if len(h.recent) < h.cfg.NRTTSample {
		return noRTT
	}
	m := h.recent[0]
	for _, r := range h.recent[1:] {
		m = min(m, r)
	}
	return m
}

// checkSlowStart enters CSS when this round's minimum RTT exceeds the last
// round's by the threshold (section 4.2), or when the last NRTTSample
// samples all do. The second rule is satquic's: with a paced sender and a
// buffer of one BDP, the queue builds and overflows within the round in
// which the window passes the BDP, and the round's minimum (which
// includes the samples of its first packets, sent before the queue)
// shows the increase a round too late, after the losses.
func (h *hystart) checkSlowStart() {
	if h.samples < h.cfg.NRTTSample || h.currentRoundMin == noRTT || h.lastRoundMin == noRTT {
		return
	}
	thresh := h.lastRoundMin / time.Duration(h.cfg.MinRTTDivisor)
	thresh = max(h.cfg.MinRTTThresh, min(thresh, h.cfg.MaxRTTThresh))
	trend := h.recentMin()
	switch {
	case h.currentRoundMin >= h.lastRoundMin+thresh:
		h.cssBaseline = h.currentRoundMin
	case trend != noRTT && trend >= h.lastRoundMin+thresh:
		h.cssBaseline = trend
		h.trendEntry = true
	default:
		return
	}
	h.inCSS = true
	h.cssRounds = 0
}

// checkCSS returns to slow start when the RTT falls below the baseline:
// the increase was a spurious jitter (section 4.2).
func (h *hystart) checkCSS() {
	level := h.currentRoundMin
	if h.trendEntry {
		level = h.recentMin()
	}
	if h.samples >= h.cfg.NRTTSample && level != noRTT && level < h.cssBaseline {
		h.cssBaseline = noRTT
		h.inCSS = false
	}
}

// onCongestion ends HyStart++: later slow starts (after persistent
// congestion) are standard (section 4.3).
func (h *hystart) onCongestion() {
	h.enabled = false
	h.inCSS = false
}
