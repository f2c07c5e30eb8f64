package recovery

import "time"

// Under FECAuto a packet the peer rebuilt from repairs counts as congestion
// only where the path shows congestion around its loss, and is otherwise
// delivered, as under FECHide. RFC 9265 section 4.2 asks a sender to treat
// such a packet as a congestion signal unless it knows the path loses
// packets for other reasons; auto learns that per loss from three pieces of
// evidence the sender already has:
//
//   - Queueing delay. A bottleneck queue that overflows is full when it
//     drops, so the round trips measured around a congestion loss exceed
//     the minimum by the queue's delay. The RTT near the loss is the
//     smallest of the last autoRTTSamples samples (net of the peer's ack
//     delay) taken within one smoothed RTT: the smallest, so that jitter
//     and a late ACK do not look like a queue; recent, because the rebuilt
//     packet's report comes about one round trip after it was sent, with
//     the ACKs of its neighbours. Congestion if that RTT exceeds the
//     minimum by FECAutoConfig's threshold: QueueDelayFraction of the
//     minimum RTT, at least MinQueueDelay.
//   - ECN. A CE mark reported within one smoothed RTT.
//   - Losses beyond what FEC repairs. A queue that overflows while the
//     sender still grows drops a share of the packets (a fifth, at a
//     pacing rate 1.25 times the bottleneck's) that no redundancy
//     controller covers, where a random-loss path's repairs are sized to
//     its loss. Congestion if, over the last one to two smoothed RTTs, at
//     least UnrepairedLosses in-flight packets were lost and not rebuilt,
//     and they make at least UnrepairedRate of the packets sent meanwhile.
//     A loss is known not rebuilt when the packet was not protected, or
//     when a source's rebuild was not reported within a PTO period of its
//     loss (fec_defer.go).
//
// The minimum RTT is the connection's (RFC 9002 section 5.2): a path whose
// base delay steps up by more than the threshold (a satellite handover to
// a longer path) looks queued while the step lasts, and auto then counts
// rebuilt packets as signal does. Starlink's 3 s steps from 25 to 40 ms
// each way do so; over the starlink profile auto is still faster than
// hide (10 MB: 1.30 s against 1.50 s, the median of 5 runs).
//
// A packet declared lost while the path shows congestion signals at once,
// a FEC source or repair like any other. Otherwise a lost repair is no
// signal, as under FECHide (fec_hide.go): the sources' own fates carry the
// evidence; and a lost source's signal waits for the report of its
// rebuild, as under FECHide (fec_defer.go): if the report comes and finds
// the path congested, it signals with the packets of that report.

// FECAutoConfig tunes the FECAuto policy's congestion test.
type FECAutoConfig struct {
	// QueueDelayFraction is the queueing delay, as a fraction of the
	// minimum RTT, above which a rebuilt packet counts as congestion:
	// 0.5. CUBIC keeps 0.7 of its window when it reduces (RFC 9438
	// section 4.6), so a reduction taken when the queue holds at least
	// half a minimum RTT keeps 0.7 x 1.5 = 1.05 bandwidth-delay products
	// in flight: the link stays busy while the queue drains, where a
	// random loss on an empty queue would leave it idle for seconds on a
	// long path. A queue that overflows above the threshold (the
	// interop runner's 25 packets hold 29 ms at 10 Mbit/s over a 30 ms
	// path) is found by its delay; a shallower one by its unrepaired
	// losses.
	QueueDelayFraction float64
	// MinQueueDelay is the threshold's floor: 5 ms, above the jitter of
	// a short path and the timer granularity of the peer's ACKs.
	MinQueueDelay time.Duration
	// UnrepairedLosses and UnrepairedRate define losses beyond what FEC
	// repairs: at least 3 packets lost and not rebuilt over the last one
	// to two smoothed RTTs, and at least a tenth of the packets sent
	// meanwhile. A tenth is ten times geo-lossy's random loss (whose
	// unrepaired part is smaller still) and above ifc-geo's mean loss
	// (about 7%), and half the share an overflowing queue drops in slow
	// start. One unrepaired loss signals congestion of its own, as any
	// loss; the test makes the next losses signal at once, not a PTO
	// period later. It finds the interop runner's 25-packet queue over a
	// GEO path (geo-interop: 15 ms of queue for 600 ms of RTT), where
	// 10 MB take 8.1 s with it and 8.5 s without, as under hide.
	UnrepairedLosses int
	UnrepairedRate   float64
}

// Defaults of FECAutoConfig.
const (
	DefaultFECAutoQueueDelayFraction = 0.5
	DefaultFECAutoMinQueueDelay      = 5 * time.Millisecond
	DefaultFECAutoUnrepairedLosses   = 3
	DefaultFECAutoUnrepairedRate     = 0.1
)

func (a FECAutoConfig) withDefaults() FECAutoConfig {
	setDefault(&a.QueueDelayFraction, DefaultFECAutoQueueDelayFraction)
	setDefault(&a.MinQueueDelay, DefaultFECAutoMinQueueDelay)
	setDefault(&a.UnrepairedLosses, DefaultFECAutoUnrepairedLosses)
	setDefault(&a.UnrepairedRate, DefaultFECAutoUnrepairedRate)
	return a
}

func (a *FECAutoConfig) valid() bool {
	return a.QueueDelayFraction >= 0 && a.QueueDelayFraction <= 10 && a.MinQueueDelay >= 0 &&
		a.UnrepairedLosses >= 1 && a.UnrepairedRate >= 0 && a.UnrepairedRate <= 1
}

// autoRTTSamples is how many recent RTT samples describe the queue near a
// loss: HyStart++'s sample count per round (RFC 9406 section 4.3), enough
// that one sample inflated by a delayed ACK or jitter does not decide.
const autoRTTSamples = 8

type timedRTT struct {
	at, rtt time.Duration
}

// lossBucket counts in-flight packets sent and losses found not rebuilt
// over one period.
type lossBucket struct {
	sent, unrepaired int
}

// fecAuto is the path evidence FECAuto reads: recent RTT samples (a small
// ring), the last CE mark, and the unrepaired loss rate in two buckets of
// a smoothed RTT each.
type fecAuto struct {
	rtts    [autoRTTSamples]timedRTT
	nRTTs   int
	nextRTT int
	lastCE  time.Duration
	hasCE   bool
	// cur counts since curStart, prev the period before.
	cur, prev lossBucket
	curStart  time.Duration
}

func (a *fecAuto) onRTTSample(now, rtt time.Duration) {
	a.rtts[a.nextRTT] = timedRTT{at: now, rtt: rtt}
	a.nextRTT = (a.nextRTT + 1) % autoRTTSamples
	a.nRTTs = min(a.nRTTs+1, autoRTTSamples)
}

func (a *fecAuto) onCE(now time.Duration) { a.lastCE, a.hasCE = now, true }

// rotate starts a new bucket once period has passed, and forgets both if
// two have.
func (a *fecAuto) rotate(now, period time.Duration) {
	switch {
	case now-a.curStart >= 2*period:
		a.prev, a.cur, a.curStart = lossBucket{}, lossBucket{}, now
	case now-a.curStart >= period:
		a.prev, a.cur, a.curStart = a.cur, lossBucket{}, now
	}
}

// onSent counts an in-flight packet sent.
func (a *fecAuto) onSent(now, period time.Duration) {
	a.rotate(now, period)
	a.cur.sent++
}

// onUnrepaired counts an in-flight packet lost and not rebuilt.
func (a *fecAuto) onUnrepaired(now, period time.Duration) {
	a.rotate(now, period)
	a.cur.unrepaired++
}

// recentRTT is the smallest RTT sample taken within window before now, and
// whether there was one.
func (a *fecAuto) recentRTT(now, window time.Duration) (time.Duration, bool) {
	var least time.Duration
	found := false
	for i := range a.nRTTs {
		s := a.rtts[i]
		if now-s.at > window {
			continue
		}
		if !found || s.rtt < least {
			least, found = s.rtt, true
		}
	}
	return least, found
}

// queueGrown reports whether the RTT near now exceeds the minimum by the
// configured queueing delay.
func (a *fecAuto) queueGrown(cfg *FECAutoConfig, now time.Duration, rtt *RTTStats) bool {
	if !rtt.HasSample() {
		return false
	}
	recent, ok := a.recentRTT(now, rtt.SmoothedRTT())
	if !ok {
		return false
	}
	minRTT := rtt.MinRTT()
	threshold := max(time.Duration(float64(minRTT)*cfg.QueueDelayFraction), cfg.MinQueueDelay)
	return recent-minRTT > threshold
}

// recentCE reports a CE mark within one smoothed RTT before now.
func (a *fecAuto) recentCE(now time.Duration, rtt *RTTStats) bool {
	return a.hasCE && now-a.lastCE <= rtt.SmoothedRTT()
}

// unrepairedRun reports whether the losses not rebuilt over the last one
// to two periods outnumber what the repairs could cover.
func (a *fecAuto) unrepairedRun(cfg *FECAutoConfig, now time.Duration, rtt *RTTStats) bool {
	a.rotate(now, rtt.SmoothedRTT())
	lost := a.prev.unrepaired + a.cur.unrepaired
	sent := a.prev.sent + a.cur.sent
	return lost >= cfg.UnrepairedLosses && float64(lost) >= cfg.UnrepairedRate*float64(sent)
}

// congested applies the three tests.
func (a *fecAuto) congested(cfg *FECAutoConfig, now time.Duration, rtt *RTTStats) bool {
	return a.queueGrown(cfg, now, rtt) || a.recentCE(now, rtt) || a.unrepairedRun(cfg, now, rtt)
}

// autoDecideLoss is called for each packet loss detection declares lost.
// It remembers the loss of a packet FEC does not protect as unrepaired (a
// source's is, once its rebuild was not reported in time: fireDeferred).
// And under FECAuto it lets a FEC packet signal at once when the path
// shows congestion now: a source, whose rebuild would then count as
// congestion too, so that waiting a PTO period for it only lets the queue
// overflow for that long (in the p2p profile, five times the drops and a
// tenth more time for 10 MB); and a repair, which an overflowing queue
// drops as readily as the data.
func (s *Sender) autoDecideLoss(now time.Duration, rec *sentPacket) {
	const fecFlags = flagDeferSignal | flagHiddenRepair
	if rec.flags&fecFlags == 0 {
		if rec.has(flagInFlight) && !rec.has(flagPathProbe) {
			s.auto.onUnrepaired(now, s.rtt.SmoothedRTT())
		}
		return
	}
	if s.cfg.FECPolicy == FECAuto && s.auto.congested(&s.cfg.FECAuto, now, &s.rtt) {
		rec.flags &^= fecFlags
	}
}

// RecoveredIsCongestion reports whether a packet the peer reports rebuilt
// now counts as a congestion signal under the configured policy: always
// under FECSignal, never under FECHide, and under FECAuto when the path
// shows congestion (queueing delay, ECN-CE or unrepaired losses around
// now). Where it does not, the packet is delivered for congestion control
// and rate sampling. A controller's loss model (the loss rate of a
// delivery-rate sample) follows the same answer: the Sender counts a
// rebuilt packet as lost bytes exactly when this reports true.
func (s *Sender) RecoveredIsCongestion(now time.Duration) bool {
	switch s.cfg.FECPolicy {
	case FECHide:
		return false
	case FECAuto:
		return s.auto.congested(&s.cfg.FECAuto, now, &s.rtt)
	}
	return true
}
