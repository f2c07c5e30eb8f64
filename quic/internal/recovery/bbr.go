package recovery

import (
	"math"
	"time"
)

// BBRState is the state of BBR's state machine (draft-ietf-ccwg-bbr
// section 4.1.1), as qlog and statistics show it. The zero value is no BBR
// state: the controller is not BBR.
type BBRState uint8

const (
	BBRNone BBRState = iota
	// BBRStartup doubles the sending rate each round trip until the
	// bandwidth stops growing or losses exceed the threshold.
	BBRStartup
	// BBRDrain paces below the estimate until Startup's queue is gone.
	BBRDrain
	// BBRProbeBWDown, Cruise, Refill and Up are the four phases of the
	// bandwidth-probing cycle (section 5.3.3).
	BBRProbeBWDown
	BBRProbeBWCruise
	BBRProbeBWRefill
	BBRProbeBWUp
	// BBRProbeRTT cuts the data in flight to re-measure the minimum RTT
	// (section 5.3.4).
	BBRProbeRTT
)

func (s BBRState) String() string {
	switch s {
	case BBRNone:
		return "none"
	case BBRStartup:
		return "startup"
	case BBRDrain:
		return "drain"
	case BBRProbeBWDown:
		return "probe_bw_down"
	case BBRProbeBWCruise:
		return "probe_bw_cruise"
	case BBRProbeBWRefill:
		return "probe_bw_refill"
	case BBRProbeBWUp:
		return "probe_bw_up"
	case BBRProbeRTT:
		return "probe_rtt"
	}
	return "invalid"
}

// BBRSnapshot is BBR's model in ControllerState.
type BBRSnapshot struct {
	State BBRState
	// Bandwidth is BBR.bw, the bandwidth the model uses (bytes per
	// second), and MaxBandwidth BBR.max_bw, the windowed maximum delivery
	// rate.
	Bandwidth, MaxBandwidth uint64
	// MinRTT is BBR.min_rtt; zero before the first sample.
	MinRTT time.Duration
	// InflightHi and InflightLo are the upper and lower bounds on the
	// data in flight in bytes; -1 when unset.
	InflightHi, InflightLo int64
	// PacingGain and CwndGain are the current gains.
	PacingGain, CwndGain float64
	// RoundCount counts packet-timed round trips, and CycleCount ProbeBW
	// cycles.
	RoundCount, CycleCount uint64
	// FullBandwidthReached: Startup found the pipe full.
	FullBandwidthReached bool
}

// ackPhase tracks which ACKs carry the feedback of a bandwidth probe
// (section 5.3.3.6, BBR.ack_phase).
type ackPhase uint8

const (
	acksInit ackPhase = iota
	acksRefilling
	acksProbeStarting
	acksProbeFeedback
	acksProbeStopping
)

const (
	unsetBytes = int64(math.MaxInt64)
	unsetRate  = uint64(math.MaxUint64)
)

// bbr is BBRv3 as draft-ietf-ccwg-bbr specifies it. The Sender's
// delivery-rate sampler (rate.go) is the draft's section 4.5 estimator;
// the controller keeps the model (bbr_model.go), the Startup and Drain
// states (bbr_startup.go), ProbeBW (bbr_probebw.go), ProbeRTT
// (bbr_probertt.go), the loss and ECN bounds (bbr_bounds.go), and derives
// the pacing rate and window from them (bbr_pacing.go). Bytes are used
// where the draft counts packets, in units of the maximum datagram size.
type bbr struct {
	cfg         BBRConfig
	mds         int
	maxWindow   int
	initialCwnd int
	rng         splitMix

	state      BBRState
	pacingGain float64
	cwndGain   float64
	cwnd       int
	pacingRate uint64
	quantum    int

	// delivered and inflight are C.delivered and C.inflight as the last
	// event left them.
	delivered int64
	inflight  int64
	sent      bool

	// Round trips (section 5.5.1).
	nextRoundDelivered int64
	roundCount         uint64
	roundStart         bool
	// sentCwndLimited: a packet left with the window full since the round
	// began; isCwndLimited: that, or the previous round was limited.
	sentCwndLimited, isCwndLimited bool

	// The bandwidth model (section 5.5).
	bwFilter            [2]uint64
	maxBw               uint64
	cycleCount          uint64
	bw                  uint64
	bwLo                uint64
	bwLatest            uint64
	inflightLatest      int64
	inflightHi          int64
	inflightLo          int64
	extraAcked          roundMaxFilter
	extraAckedStart     time.Duration
	extraAckedDelivered int64

	// The minimum RTT (section 5.5.6 and 5.3.4.3).
	minRTT, probeRTTMinDelay       time.Duration
	minRTTStamp, probeRTTMinStamp  time.Duration
	probeRTTExpired                bool
	probeRTTDone                   time.Duration
	hasProbeRTTDone, probeRTTRound bool
	// appLimitedUntil is the delivered count below which a sample is
	// application limited: the draft marks the connection so in
	// ProbeRTT (MarkConnectionAppLimited); the Sender's marking is the
	// core's, so the controller keeps its own.
	appLimitedUntil int64
	idleRestart     bool
	priorCwnd       int

	// Startup's full-pipe estimator (section 5.3.1.2).
	fullBw        uint64
	fullBwCount   int
	fullBwNow     bool
	fullBwReached bool

	// Congestion signals of the current loss round (section 5.5.10),
	// and the summary of the last completed one.
	lossRoundDelivered int64
	lossRoundStart     bool
	lossInRound        bool
	round              roundSignals
	lastRound          roundSignals

	// ProbeBW (section 5.3.3).
	cycleStamp         time.Duration
	ackPhase           ackPhase
	roundsSinceBwProbe uint64
	bwProbeWait        time.Duration
	bwProbeUpRounds    int
	bwProbeUpAcks      int64
	probeUpCnt         int64
	bwProbeSamples     bool

	// lr is the long-RTT departure of the first Startup (bbr_longrtt.go);
	// lrDone once the first RTT sample decided it.
	lr     longRTT
	lrDone bool

	// res is Careful Resume's state (bbr_resume.go).
	res bbrResume

	// Loss recovery (section 5.6.4.4).
	// pendingLoss is the bytes lost since the last ACK, which decides
	// the window's response (onLosses).
	pendingLoss        int64
	inRecovery         bool
	recoveryStart      time.Duration
	packetConservation bool
	recoveries         uint64
}

// roundSignals counts a round trip's congestion signals.
type roundSignals struct {
	lossEvents int
	lostBytes  int64
	acked      int64
	cePackets  uint64
}

// lossRate is the fraction of the round's bytes that were lost.
func (r *roundSignals) lossRate() float64 {
	if r.lostBytes == 0 {
		return 0
	}
	return float64(r.lostBytes) / float64(r.lostBytes+r.acked)
}

// ceRatio is the fraction of the round's packets marked ECN-CE.
func (r *roundSignals) ceRatio(mds int) float64 {
	if r.cePackets == 0 {
		return 0
	}
	pkts := float64(r.acked) / float64(mds)
	return float64(r.cePackets) / max(pkts, float64(r.cePackets))
}

func newBBR(cfg *Config) *bbr {
	b := &bbr{
		cfg:         cfg.BBR.withDefaults(),
		mds:         cfg.MaxDatagramSize,
		maxWindow:   cfg.MaxWindow,
		initialCwnd: cfg.initialWindow(cfg.MaxDatagramSize),
		rng:         splitMix(cfg.BBR.Seed),
		lr:          newLongRTT(cfg),
	}
	b.extraAcked = newRoundMaxFilter(b.cfg.ExtraAckedRounds)
	b.cwnd = b.initialCwnd
	b.bwLo, b.inflightHi, b.inflightLo = unsetRate, unsetBytes, unsetBytes
	b.probeUpCnt = unsetBytes
	b.initPacingRate()
	b.enterStartup()
	return b
}

// OnPacketSent is the draft's BBROnTransmit: a send after an idle period
// restarts from idle (section 5.4.4), and a send that fills the window
// marks the round cwnd-limited.
func (b *bbr) OnPacketSent(now time.Duration, bytes int, priorInFlight int64) {
	if priorInFlight == 0 && b.sent {
		b.handleRestartFromIdle(now)
	}
	b.sent = true
	b.lr.flight.onSent(now, bytes)
	b.inflight = priorInFlight + int64(bytes)
	if b.inflight+int64(b.mds) > int64(b.cwnd) {
		b.sentCwndLimited, b.isCwndLimited = true, true
	}
	b.resumeOnSent(bytes)
}

// OnAck is the draft's BBRUpdateOnACK (section 5.2.3).
func (b *bbr) OnAck(now time.Duration, ev *AckEvent) {
	b.delivered = ev.Delivered
	b.inflight = ev.BytesInFlight
	rs := &ev.Rate
	if !rs.HasData {
		return
	}
	b.longRTTStartup(ev)
	b.firstFlightSample(now, ev)
	b.updateRecovery(ev)
	if b.resumeSample(now, rs) {
		return
	}
	b.updateModelAndState(now, rs)
	b.updateControlParameters(now, rs)
}

// updateModelAndState is BBRUpdateModelAndState.
func (b *bbr) updateModelAndState(now time.Duration, rs *RateSample) {
	s := b.sample(rs)
	b.updateLatestDeliverySignals(&s)
	b.updateCongestionSignals(&s)
	b.updateACKAggregation(now, &s)
	b.checkFullBwReached(&s)
	b.checkStartupDone()
	b.checkDrainDone(now)
	b.updateProbeBWCyclePhase(now, &s)
	b.updateMinRTT(now, &s)
	b.checkProbeRTT(now, &s)
	b.advanceLatestDeliverySignals(&s)
	b.boundBwForModel()
}

// updateControlParameters is BBRUpdateControlParameters, after the
// window's response to the losses the ACK revealed.
func (b *bbr) updateControlParameters(now time.Duration, rs *RateSample) {
	s := b.sample(rs)
	b.onLosses(now, &s)
	b.setPacingRate()
	b.setSendQuantum()
	b.setCwnd(rs.NewlyAcked)
}

// OnCongestionEvent takes losses (and FEC rebuilds under FECSignal) and
// ECN-CE increases: they count toward the round's signals, and the next
// ACK decides the window's response to the losses (onLosses).
func (b *bbr) OnCongestionEvent(_ time.Duration, ev *CongestionEvent) {
	b.inflight = ev.BytesInFlight
	if ev.Cause == CauseECN {
		b.lr.flight.stop()
		b.lossInRound = true
		b.round.cePackets += max(ev.CEPackets, 1)
		return
	}
	if ev.LostBytes > 0 {
		b.lossInRound = true
		b.round.lossEvents++
		b.round.lostBytes += ev.LostBytes
		b.pendingLoss += ev.LostBytes
	}
	b.stopFirstFlightOnLoss(ev)
	if ev.Persistent {
		// The draft's response to a retransmission timeout: the window
		// restarts from what is in flight plus one packet.
		b.saveCwnd()
		b.cwnd = max(int(ev.BytesInFlight)+b.mds, b.minPipeCwnd())
	}
}

func (b *bbr) Window() int { return b.cwnd }

// PacingRate is BBR.pacing_rate; the RTT estimator is not needed, the
// model holds the minimum RTT.
func (b *bbr) PacingRate(*RTTStats) uint64 { return b.pacingRate }

// InSlowStart reports Startup, BBR's counterpart of slow start.
func (b *bbr) InSlowStart() bool { return b.state == BBRStartup }

func (b *bbr) SetMaxDatagramSize(n int) {
	if n <= 0 {
		return
	}
	b.mds = n
	b.cwnd = min(max(b.cwnd, b.minPipeCwnd()), b.maxWindow)
}

// State reports the window and BBR's model. Phase maps Startup to slow
// start, a recovery period to recovery and every other state to
// congestion avoidance; BBR.State names the state exactly.
func (b *bbr) State() ControllerState {
	phase := PhaseCongestionAvoidance
	switch {
	case b.inRecovery:
		phase = PhaseRecovery
	case b.state == BBRStartup:
		phase = PhaseSlowStart
	}
	return ControllerState{
		Algorithm:     BBR,
		Phase:         phase,
		Window:        b.cwnd,
		SSThresh:      InfiniteSSThresh,
		RecoveryStart: b.recoveryStart,
		Reductions:    b.recoveries,
		BBR: BBRSnapshot{
			State:                b.state,
			Bandwidth:            b.bw,
			MaxBandwidth:         b.maxBw,
			MinRTT:               b.minRTT,
			InflightHi:           bound(b.inflightHi),
			InflightLo:           bound(b.inflightLo),
			PacingGain:           b.pacingGain,
			CwndGain:             b.cwndGain,
			RoundCount:           b.roundCount,
			CycleCount:           b.cycleCount,
			FullBandwidthReached: b.fullBwReached,
		},
	}
}

func bound(v int64) int64 {
	if v == unsetBytes {
		return -1
	}
	return v
}

func (b *bbr) minPipeCwnd() int { return b.cfg.MinPipeCwndPackets * b.mds }

// splitMix is SplitMix64, a small generator for the probe wait's random
// parts: seeded from the configuration, so a run replays exactly.
type splitMix uint64

func (s *splitMix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a number in [0, 1).
func (s *splitMix) float() float64 { return float64(s.next()>>11) / (1 << 53) }
