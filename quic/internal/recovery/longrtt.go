package recovery

import "time"

// longRTTSamples is the number of consecutive RTT samples that must all
// show the increase before the long-RTT slow start ends: one sample above
// the threshold is jitter or a delayed ACK, a run of them is a queue.
const longRTTSamples = 8

// longRTTExitHeadroom multiplies the measured bandwidth-delay product to
// give the window after a delay exit: the ACK clock needs the pipe plus
// the peer's ACK delay, and the measured rate may be a little low.
const longRTTExitHeadroom = 1.25

// longRTT is the accelerated first slow start of LongRTTConfig.
//
// Growth (window.go, slowStart): each acknowledged byte grows the window
// by f bytes, f = min(minRTT/ReferenceRTT, MaxFactor), so the window grows
// (1+f)-fold per round trip, sevenfold on a GEO path; unless
// NoScaleInitialWindow the first RTT sample raises the window to f initial
// windows, the rate a 10-packet window has on a ReferenceRTT path.
//
// Pacing: the window is paced at (1+f) x cwnd/srtt instead of RFC 9002's
// 1.25 x. Each round trip's packets then leave as a train at the rate the
// next round trip will average, so a bottleneck slower than that rate
// builds a queue within the train, which the train's RTT samples show, a
// round trip before the window itself reaches the bottleneck's
// bandwidth-delay product. Without it the window would overshoot by the
// growth of the round trip the exit needs to see the queue, several times
// the path at (1+f)-fold growth.
//
// Exit: HyStart++ (RFC 9406 section 4.2) compares the minimum RTT of a
// round with the last round's, so it reacts a round after the queue began.
// This test compares each RTT sample (less the ack delay) with the path's
// minimum RTT, with HyStart++'s threshold clamp(minRTT/MinRTTDivisor,
// MinRTTThresh, MaxRTTThresh), and ends slow start when longRTTSamples
// consecutive samples are above it.
//
// Window at the exit: the bottleneck was busy without a pause while those
// samples' packets went through it (each saw a queue), so the bytes their
// ACKs acknowledged over the time the ACKs took measure its rate
// (trainSample). The window becomes that rate times the minimum RTT, with longRTTExitHeadroom,
// at most (1+f) times the window (the next round's growth). If that is a
// reduction (the last train's queue overshot), it opens a recovery period
// (RFC 9002 section 7.3.2): losses of the packets already sent do not
// reduce the window again. Either way, for the next round trip (until a
// packet sent after the exit is acknowledged) the sender paces at the
// measured rate, and a window larger than the new one is kept while those
// packets are in flight: sending at the bottleneck's rate adds nothing to
// its queue, and keeps it busy while losses not yet detected still count
// in flight (a window cut at once would leave the link idle until they
// are).
//
// Loss before the exit (a buffer smaller than the threshold's queue, or a
// random loss): the reduction starts from at most the bandwidth-delay
// product of the fastest train, not from a window that grew (1+f)-fold
// since the lost packet was sent. A train that overflowed a small buffer
// was faster than the bottleneck, so it measured the bottleneck's rate; a
// random loss in a train slower than the bottleneck leaves about the
// window of that round trip, which the train carried.
type longRTT struct {
	cfg LongRTTConfig
	hs  HyStartConfig
	// active is cleared when slow start ends or at the first congestion
	// event: only the first slow start is accelerated. used: the last ACK
	// of the slow start was accelerated.
	active, used bool
	// paced: an unpaced sender limits the bytes an ACK may count to
	// HyStart++'s L (RFC 9406 section 4.3) before scaling, and cannot hold
	// a rate after the exit.
	paced bool
	// iwPackets and iwLimit give the initial window (RFC 9002 section
	// 7.2); iwScaled: it was scaled to the RTT.
	iwPackets, iwLimit int
	iwScaled           bool

	// run counts the consecutive samples above the threshold.
	run int

	// acks are the last longRTTSamples ACKs, oldest at next once full;
	// trainRate is the largest rate measured over them (bytes per
	// second, see trainSample); minRTT is the latest minimum RTT.
	acks      [longRTTSamples]ackPoint
	nAcks     int
	next      int
	trainRate uint64
	minRTT    time.Duration

	// holding: the round trip after the exit at exitTime, paced at
	// holdRate (bytes per second); target is the window after it.
	holding  bool
	holdRate uint64
	target   int64
	exitTime time.Duration

	// flight measures the first flight for the jump (LongRTTConfig.NoJump
	// turns it off).
	flight firstFlight
}

func newLongRTT(cfg *Config) longRTT {
	return longRTT{
		cfg:       cfg.LongRTT,
		hs:        cfg.HyStart,
		active:    !cfg.LongRTT.Disabled,
		paced:     !cfg.Pacing.Disabled,
		iwPackets: cfg.InitialWindowPackets,
		iwLimit:   cfg.InitialWindowLimit,
	}
}

// factor is the growth per acknowledged byte: 1 (RFC 9002 slow start)
// unless the acceleration applies to this path.
func (l *longRTT) factor(rtt *RTTStats) float64 {
	if !l.active || !rtt.HasSample() || rtt.MinRTT() < l.cfg.MinRTT || rtt.MinRTT() <= l.cfg.ReferenceRTT {
		return 1
	}
	return min(float64(rtt.MinRTT())/float64(l.cfg.ReferenceRTT), l.cfg.MaxFactor)
}

// initialWindow is the scaled initial window for growth factor f, or 0
// when it does not apply.
func (l *longRTT) initialWindow(mds int, f float64) int64 {
	if l.cfg.NoScaleInitialWindow || l.iwScaled {
		return 0
	}
	l.iwScaled = true
	if !l.cfg.NoJump && l.paced {
		l.flight.arm()
	}
	iw := min(l.iwPackets*mds, max(l.iwLimit, 2*mds))
	return int64(float64(iw) * f)
}

// threshold is HyStart++'s RTT increase threshold for a minimum RTT
// (RFC 9406 section 4.2), with the configured bounds.
func (l *longRTT) threshold(minRTT time.Duration) time.Duration {
	div := max(l.hs.MinRTTDivisor, 1)
	return max(l.hs.MinRTTThresh, min(minRTT/time.Duration(div), l.hs.MaxRTTThresh))
}

// onAck takes an ACK in the accelerated slow start with growth factor f.
// It returns the growth for n acknowledged bytes, or exit, after which
// target (zero if nothing was measured) and holding describe what
// follows.
func (l *longRTT) onAck(now time.Duration, ev *AckEvent, n int64, mds, cwnd int, f float64) (grow int64, exit bool) {
	l.used = true
	l.minRTT = ev.RTT.MinRTT()
	l.trainSample(now, ev)
	if rate, done := l.flight.onAck(now, ev, l.threshold(l.minRTT)); done && rate > 0 && l.jumpWindow(rate) > int64(cwnd) {
		l.jump(now, rate)
		return 0, true
	}
	if ev.HasRTTSample && l.sample(now, ev) {
		l.exit(now, cwnd, f)
		return 0, true
	}
	if !l.paced {
		n = min(n, int64(hystartUnpacedL*mds))
	}
	return int64(float64(n) * f), false
}

// sample records an RTT sample and reports whether it completes a run of
// longRTTSamples above the threshold.
func (l *longRTT) sample(now time.Duration, ev *AckEvent) bool {
	rtt := ev.RTT
	if rtt.AdjustedRTT() < rtt.MinRTT()+l.threshold(rtt.MinRTT()) {
		l.run = 0
		return false
	}
	l.run++
	return l.run >= longRTTSamples
}

// ackPoint is what trainSample remembers of an ACK: when it arrived, the
// connection's delivered count after it, and when the newest packet it
// acknowledged was sent.
type ackPoint struct {
	at, sent  time.Duration
	delivered int64
}

// trainSample measures the rate of the last longRTTSamples ACKs: the bytes
// they acknowledged over the longer of the time they took to arrive and
// the time their packets took to leave. A train of packets faster than
// the bottleneck comes back at the bottleneck's rate (each packet leaves
// it one transmission time after the previous one), a slower train at its
// own rate; the time the packets took to leave keeps ACKs that the return
// path bunched from reading faster than the train was sent (as the
// delivery rate estimate does over a round trip, section 3.3 of
// draft-cheng-iccrg-delivery-rate-estimation). The largest value over the
// slow start is thus the bottleneck's rate once a train reached it, and
// never more than the fastest train sent.
func (l *longRTT) trainSample(now time.Duration, ev *AckEvent) {
	if len(ev.Acked) == 0 || ev.AckedBytes == 0 {
		return
	}
	p := ackPoint{at: now, sent: ev.Acked[len(ev.Acked)-1].TimeSent, delivered: ev.Delivered}
	if l.nAcks == longRTTSamples {
		old := l.acks[l.next]
		interval := max(p.at-old.at, p.sent-old.sent)
		if bytes := p.delivered - old.delivered; interval > 0 && bytes > 0 {
			l.trainRate = max(l.trainRate, mulDivSat(uint64(bytes), uint64(time.Second), uint64(interval)))
		}
	}
	l.acks[l.next] = p
	l.next = (l.next + 1) % longRTTSamples
	l.nAcks = min(l.nAcks+1, longRTTSamples)
}

// exit ends the accelerated slow start on an RTT increase: the last
// longRTTSamples ACKs were for packets that queued, so trainRate is the
// bottleneck's rate.
func (l *longRTT) exit(now time.Duration, cwnd int, f float64) {
	l.active = false
	if l.trainRate == 0 {
		return
	}
	bdp := float64(l.trainRate) * l.minRTT.Seconds()
	l.target = int64(min(bdp*longRTTExitHeadroom, float64(cwnd)*(1+f)))
	l.holdRate = l.trainRate
	l.holding = l.paced
	l.exitTime = now
}

// jumpWindow is the window a jump to rate sets.
func (l *longRTT) jumpWindow(rate uint64) int64 {
	return int64(float64(rate) * l.minRTT.Seconds() * longRTTExitHeadroom)
}

// jump ends the accelerated slow start on the first flight's measured
// rate (firstFlight): the window becomes that rate's bandwidth-delay
// product with longRTTExitHeadroom, and the next round trip is paced at
// the rate, as after a delay exit.
func (l *longRTT) jump(now time.Duration, rate uint64) {
	l.active = false
	l.target = l.jumpWindow(rate)
	l.holdRate = rate
	l.holding = l.paced
	l.exitTime = now
}

// accelerated reports whether the accelerated slow start is in progress.
func (l *longRTT) accelerated() bool { return l.active && l.used }

// lossWindow is the window a loss during the accelerated slow start
// reduces from: at most the bandwidth-delay product trainRate measured.
func (l *longRTT) lossWindow(cwnd int) int {
	if l.trainRate == 0 {
		return cwnd
	}
	bdp := mulDivSat(l.trainRate, uint64(l.minRTT), uint64(time.Second))
	return int(min(bdp, uint64(cwnd)))
}

// pacingGain is N in N x cwnd/srtt during the accelerated slow start, or
// zero.
func (l *longRTT) pacingGain(rtt *RTTStats) float64 {
	if f := l.factor(rtt); f > 1 {
		return 1 + f
	}
	return 0
}
