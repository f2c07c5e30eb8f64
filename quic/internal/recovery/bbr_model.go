package recovery

import "time"

// bbrSample is the part of a rate sample BBR's model reads, with the
// application-limited flag that includes BBR's own marking (ProbeRTT).
type bbrSample struct {
	rate           uint64 // delivery rate, 0 when the sample is not valid
	delivered      int64
	priorDelivered int64
	newlyAcked     int64
	newlyLost      int64
	lost           int64
	txInFlight     int64
	rtt            time.Duration
	appLimited     bool
}

func (b *bbr) sample(rs *RateSample) bbrSample {
	s := bbrSample{
		delivered:      rs.Delivered,
		priorDelivered: rs.PriorDelivered,
		newlyAcked:     rs.NewlyAcked,
		newlyLost:      rs.NewlyLost,
		lost:           rs.Lost,
		txInFlight:     rs.TxInFlight,
		rtt:            rs.RTT,
		appLimited:     rs.IsAppLimited || rs.PriorDelivered < b.appLimitedUntil,
	}
	if rs.Valid {
		s.rate = rs.DeliveryRate
	}
	return s
}

// updateRound is BBRUpdateRound (section 5.5.1): a round trip ends when
// a packet sent after the previous round ended is acknowledged.
func (b *bbr) updateRound(s *bbrSample) {
	b.roundStart = false
	if s.priorDelivered < b.nextRoundDelivered {
		return
	}
	b.startRound()
	b.roundCount++
	b.roundsSinceBwProbe++
	b.roundStart = true
	b.isCwndLimited, b.sentCwndLimited = b.sentCwndLimited, false
}

// startRound is BBRStartRound.
func (b *bbr) startRound() { b.nextRoundDelivered = b.delivered }

// updateMaxBw is BBRUpdateMaxBw (section 5.5.5): an application-limited
// sample enters the filter only if it raises the estimate.
func (b *bbr) updateMaxBw(s *bbrSample) {
	b.updateRound(s)
	if s.rate == 0 || (s.appLimited && s.rate < b.maxBw) {
		return
	}
	slot := &b.bwFilter[b.cycleCount%2]
	*slot = max(*slot, s.rate)
	b.maxBw = max(b.bwFilter[0], b.bwFilter[1])
}

// advanceMaxBwFilter is BBRAdvanceMaxBwFilter: the max filter spans two
// ProbeBW cycles (MaxBwFilterLen), so a new cycle forgets the one before
// the last.
func (b *bbr) advanceMaxBwFilter() {
	b.cycleCount++
	b.bwFilter[b.cycleCount%2] = 0
	b.maxBw = max(b.bwFilter[0], b.bwFilter[1])
}

// updateLatestDeliverySignals is BBRUpdateLatestDeliverySignals (section
// 5.5.10.2): the round's highest rate and volume, and the loss round.
func (b *bbr) updateLatestDeliverySignals(s *bbrSample) {
	b.lossRoundStart = false
	b.bwLatest = max(b.bwLatest, s.rate)
	b.inflightLatest = max(b.inflightLatest, s.delivered)
	if s.priorDelivered >= b.lossRoundDelivered {
		b.lossRoundDelivered = b.delivered
		b.lossRoundStart = true
	}
}

// advanceLatestDeliverySignals is BBRAdvanceLatestDeliverySignals.
func (b *bbr) advanceLatestDeliverySignals(s *bbrSample) {
	if b.lossRoundStart {
		b.bwLatest = s.rate
		b.inflightLatest = s.delivered
	}
}

// updateCongestionSignals is BBRUpdateCongestionSignals (section
// 5.5.10.3). At the end of a loss round the round's signals are summed up
// (lastRound) for Startup's exit and the ECN bound, and the lower bounds
// adapt.
func (b *bbr) updateCongestionSignals(s *bbrSample) {
	b.updateMaxBw(s)
	b.round.acked += s.newlyAcked
	if s.newlyLost > 0 {
		b.lossInRound = true
	}
	if !b.lossRoundStart {
		return
	}
	b.lastRound, b.round = b.round, roundSignals{}
	b.adaptLowerBoundsFromCongestion()
	b.lossInRound = false
}

// resetCongestionSignals is BBRResetCongestionSignals.
func (b *bbr) resetCongestionSignals() {
	b.lossInRound = false
	b.bwLatest = 0
	b.inflightLatest = 0
}

// updateACKAggregation is BBRUpdateACKAggregation (section 5.5.9): the
// data acknowledged beyond what the estimated bandwidth explains, which
// the window must cover for a path that acknowledges in bursts.
func (b *bbr) updateACKAggregation(now time.Duration, s *bbrSample) {
	interval := now - b.extraAckedStart
	expected := bytesIn(b.bw, interval)
	if b.extraAckedDelivered <= expected {
		b.extraAckedDelivered = 0
		b.extraAckedStart = now
		expected = 0
	}
	b.extraAckedDelivered += s.newlyAcked
	extra := min(b.extraAckedDelivered-expected, int64(b.cwnd))
	b.extraAcked.update(b.roundCount, extra)
}

// updateMinRTT is BBRUpdateMinRTT (section 5.3.4.3): probe_rtt_min_delay
// is the minimum over ProbeRTTInterval, min_rtt over MinRTTFilterLen.
//
// Unlike the draft, a sample within ProbeRTTSlack of probe_rtt_min_delay
// renews its time stamp too: it shows no standing queue, which is what
// ProbeRTT would drain the pipe to find out. On a path whose delay does
// not vary, as a satellite link's propagation, no sample comes below the
// minimum once measured, and the draft entered ProbeRTT every 5 s plus
// the probe itself, at half the bandwidth-delay product for a round trip
// and 200 ms: over geo-lossy (250 Mbit/s x 600 ms, 1 GB with FEC, seed 1)
// five ProbeRTTs in 40 s, while CRUISE's samples lay within 1 ms of the
// 600 ms minimum. A queue of 1/64 of the RTT (9 ms there, 0.5 ms on a
// 30 ms path) is less than pacing and ACK timing put there anyway.
func (b *bbr) updateMinRTT(now time.Duration, s *bbrSample) {
	b.probeRTTExpired = now > b.probeRTTMinStamp+b.cfg.ProbeRTTInterval
	switch {
	case s.rtt > 0 && (b.probeRTTMinDelay == 0 || s.rtt < b.probeRTTMinDelay || b.probeRTTExpired):
		b.probeRTTMinDelay = s.rtt
		b.probeRTTMinStamp = now
	case s.rtt > 0 && float64(s.rtt) <= float64(b.probeRTTMinDelay)*(1+b.cfg.ProbeRTTSlack):
		b.probeRTTMinStamp = now
	}
	minRTTExpired := now > b.minRTTStamp+b.cfg.MinRTTFilterLen
	if b.probeRTTMinDelay > 0 && (b.minRTT == 0 || b.probeRTTMinDelay < b.minRTT || minRTTExpired) {
		b.minRTT = b.probeRTTMinDelay
		b.minRTTStamp = b.probeRTTMinStamp
	}
}

// boundBwForModel is BBRBoundBWForModel: bw is max_bw capped by bw_lo.
func (b *bbr) boundBwForModel() { b.bw = min(b.maxBw, b.bwLo) }

// bdpMultiple is BBRBDPMultiple: gain x bw x min_rtt, or the initial
// window before the first RTT sample.
func (b *bbr) bdpMultiple(bw uint64, gain float64) int64 {
	if b.minRTT == 0 {
		return int64(b.initialCwnd)
	}
	return int64(gain * float64(bytesIn(bw, b.minRTT)))
}

// bytesIn is the data a rate in bytes per second moves in d.
func bytesIn(rate uint64, d time.Duration) int64 {
	if d <= 0 || rate == 0 {
		return 0
	}
	return int64(min(mulDivSat(rate, uint64(d), uint64(time.Second)), uint64(unsetBytes)))
}

// roundMaxFilter is a windowed maximum over the last n round trips: one
// slot per round, each holding that round's maximum.
type roundMaxFilter struct {
	rounds []uint64
	values []int64
}

func newRoundMaxFilter(n int) roundMaxFilter {
	return roundMaxFilter{rounds: make([]uint64, n), values: make([]int64, n)}
}

func (f *roundMaxFilter) update(round uint64, v int64) {
	i := round % uint64(len(f.rounds))
	if f.rounds[i] != round {
		f.rounds[i], f.values[i] = round, v
		return
	}
	f.values[i] = max(f.values[i], v)
}

// best is the maximum over the slots of the last n rounds up to round.
func (f *roundMaxFilter) best(round uint64) int64 {
	var m int64
	n := uint64(len(f.rounds))
	for i, r := range f.rounds {
		if r <= round && round-r < n {
			m = max(m, f.values[i])
		}
	}
	return m
}
