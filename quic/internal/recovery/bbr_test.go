package recovery

import (
	"testing"
	"time"
)

// bbrHarness drives a BBR controller with scripted ACKs: each ACK ends a
// round trip (it acknowledges a packet sent after the previous one) and
// carries a delivery-rate sample of the given rate over the round.
type bbrHarness struct {
	t         *testing.T
	b         *bbr
	now       time.Duration
	delivered int64
	rtt       time.Duration
	stats     RTTStats
	changes   []bbrChange
}

type bbrChange struct {
	at    time.Duration
	state BBRState
}

func newBBRHarness(t *testing.T, mutate func(*Config)) *bbrHarness {
	cfg := DefaultConfig()
	cfg.Algorithm = BBR
	cfg.LongRTT.Disabled = true
	cfg.BBR.Seed = 1
	if mutate != nil {
		mutate(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	b := newController(&cfg).(*bbr)
	return &bbrHarness{t: t, b: b, rtt: 100 * ms, stats: newRTTStats(cfg.InitialRTT, 0), changes: []bbrChange{{0, b.state}}}
}

// ackOpts are the optional parts of a scripted ACK.
type ackOpts struct {
	inflight   int64 // bytes in flight after the ACK
	lost       int64 // bytes lost since the acknowledged packet was sent
	txInFlight int64 // bytes in flight when it was sent
	appLimited bool
	rtt        time.Duration // 0: the harness's
	sameRound  bool          // the ACK does not end a round trip
}

// round advances time by one round trip and acknowledges rate x RTT
// bytes.
func (h *bbrHarness) round(rate uint64, o ackOpts) {
	h.t.Helper()
	rtt := h.rtt
	if o.rtt > 0 {
		rtt = o.rtt
	}
	h.now += h.rtt
	prior := h.delivered
	if o.sameRound {
		prior = h.b.nextRoundDelivered - 1
	}
	acked := bytesIn(rate, h.rtt)
	h.delivered += acked
	if o.txInFlight == 0 {
		o.txInFlight = acked
	}
	h.stats.update(h.now, rtt, 0, true)
	ev := AckEvent{
		RTT:           &h.stats,
		HasRTTSample:  true,
		AckedBytes:    acked,
		BytesInFlight: o.inflight,
		Delivered:     h.delivered,
		Rate: RateSample{
			HasData: true, Valid: true, DeliveryRate: rate, Delivered: acked,
			Interval: h.rtt, PriorDelivered: prior, IsAppLimited: o.appLimited,
			RTT: rtt, NewlyAcked: acked, TxInFlight: o.txInFlight, Lost: o.lost,
		},
	}
	h.b.OnAck(h.now, &ev)
	if s := h.b.state; s != h.changes[len(h.changes)-1].state {
		h.changes = append(h.changes, bbrChange{h.now, s})
	}
}

func (h *bbrHarness) wantState(s BBRState) {
	h.t.Helper()
	if h.b.state != s {
		h.t.Fatalf("at %v: state %v, want %v (changes %v)", h.now, h.b.state, s, h.changes)
	}
}

const mbps = 1_000_000 / 8 // bytes per second in a Mbit/s

// Startup ends after three round trips in which max_bw grew by less than
// a quarter (section 5.3.1.2), Drain when the data in flight is down to
// the estimated BDP, and ProbeBW_DOWN goes on to CRUISE at once when
// nothing is queued.
func TestBBRStartupDrainProbeBW(t *testing.T) {
	h := newBBRHarness(t, nil)
	for _, r := range []uint64{10, 20, 40, 80, 90, 95, 99} {
		h.round(r*mbps, ackOpts{inflight: 3_000_000})
	}
	// 90 is not 1.25 x 80: rounds 5, 6 and 7 are flat.
	h.wantState(BBRDrain)
	if !h.b.fullBwReached || h.b.maxBw != 99*mbps || h.b.pacingGain != 0.35 {
		t.Fatalf("full %v, max_bw %d, pacing gain %v", h.b.fullBwReached, h.b.maxBw, h.b.pacingGain)
	}
	// BDP: 99 Mbit/s x 100 ms = 1,237,500 bytes.
	h.round(99*mbps, ackOpts{inflight: 1_300_000})
	h.wantState(BBRDrain)
	h.round(99*mbps, ackOpts{inflight: 1_237_500})
	h.wantState(BBRProbeBWCruise)
	want := []bbrChange{{0, BBRStartup}, {700 * ms, BBRDrain}, {900 * ms, BBRProbeBWCruise}}
	if !equalChanges(h.changes, want) {
		t.Fatalf("changes %v, want %v", h.changes, want)
	}
	// The pacing rate is the estimate less the 1% margin.
	if got, want := h.b.pacingRate, uint64(float64(99*mbps)*0.99); got != want {
		t.Errorf("pacing rate %d in CRUISE, want %d", got, want)
	}
}

func equalChanges(a, b []bbrChange) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// toCruise runs a harness through Startup and Drain at 80 Mbit/s.
func toCruise(h *bbrHarness) {
	h.t.Helper()
	for _, r := range []uint64{10, 20, 40, 80, 80, 80, 80} {
		h.round(r*mbps, ackOpts{inflight: 900_000})
	}
	h.wantState(BBRProbeBWCruise)
}

// ProbeBW's cycle: CRUISE until the probe wait drawn at DOWN's start has
// passed, REFILL for a round trip, UP until the bandwidth is flat for
// three round trips, then DOWN, and the max filter moves to a new cycle a
// round after.
func TestBBRProbeBWCycle(t *testing.T) {
	h := newBBRHarness(t, nil)
	toCruise(h)
	start, wait := h.b.cycleStamp, h.b.bwProbeWait
	if wait < 2*time.Second || wait >= 3*time.Second {
		t.Fatalf("probe wait %v, want in [2s, 3s)", wait)
	}
	for h.b.state == BBRProbeBWCruise {
		h.round(80*mbps, ackOpts{inflight: 900_000})
	}
	h.wantState(BBRProbeBWRefill)
	if h.now <= start+wait || h.now-h.rtt > start+wait {
		t.Fatalf("REFILL at %v, want the first ACK after %v", h.now, start+wait)
	}
	refill := h.now
	h.round(80*mbps, ackOpts{inflight: 900_000})
	h.wantState(BBRProbeBWUp)
	if h.b.pacingGain != 1.25 || h.b.cwndGain != 2.25 {
		t.Fatalf("UP gains %v/%v", h.b.pacingGain, h.b.cwndGain)
	}
	for range 2 {
		h.round(80*mbps, ackOpts{inflight: 900_000})
		h.wantState(BBRProbeBWUp)
	}
	h.round(80*mbps, ackOpts{inflight: 900_000})
	h.wantState(BBRProbeBWDown)
	if h.now != refill+4*h.rtt {
		t.Fatalf("DOWN at %v, want %v", h.now, refill+4*h.rtt)
	}
	cycles := h.b.cycleCount
	h.round(80*mbps, ackOpts{inflight: 2_000_000})
	if h.b.cycleCount != cycles+1 {
		t.Fatalf("cycle count %d after a round of DOWN, want %d", h.b.cycleCount, cycles+1)
	}
	h.wantState(BBRProbeBWDown)
	h.round(80*mbps, ackOpts{inflight: 900_000})
	h.wantState(BBRProbeBWCruise)
}

// In UP, a sample whose losses exceed 2% of the data in flight when its
// packet left sets inflight_hi to that volume and ends the probe; 2% does
// not.
func TestBBRLossThresholdSetsInflightHi(t *testing.T) {
	h := newBBRHarness(t, nil)
	toCruise(h)
	for h.b.state != BBRProbeBWUp {
		h.round(80*mbps, ackOpts{inflight: 900_000})
	}
	h.round(80*mbps, ackOpts{inflight: 1_000_000, txInFlight: 1_000_000, lost: 20_000})
	h.wantState(BBRProbeBWUp)
	if h.b.inflightHi != unsetBytes {
		t.Fatalf("inflight_hi %d after 2%% loss, want unset", h.b.inflightHi)
	}
	h.round(80*mbps, ackOpts{inflight: 1_000_000, txInFlight: 1_100_000, lost: 22_001})
	h.wantState(BBRProbeBWDown)
	if h.b.inflightHi != 1_100_000 {
		t.Fatalf("inflight_hi %d, want the sample's 1,100,000", h.b.inflightHi)
	}
	// The window is bounded by it in DOWN.
	if h.b.cwnd > 1_100_000 {
		t.Fatalf("cwnd %d above inflight_hi", h.b.cwnd)
	}
}

// Outside a probe, a round trip whose losses exceed 2% of its data cuts
// bw_lo to the larger of the round's highest rate (bw_latest, which
// starts from the last sample of the round before) and 0.7 of the
// estimate; a round that lost less, as a path with random loss does
// every round, leaves it (roundCongested). REFILL lifts it.
func TestBBRLowerBoundsOnLoss(t *testing.T) {
	h := newBBRHarness(t, nil)
	toCruise(h)
	h.round(40*mbps, ackOpts{inflight: 900_000})
	if h.b.bwLo != unsetRate {
		t.Fatalf("bw_lo %d after a round without loss", h.b.bwLo)
	}
	// 10,000 of the round's 500,000 bytes: 1.96%.
	h.b.OnCongestionEvent(h.now, &CongestionEvent{Cause: CauseLoss, LostBytes: 10_000, BytesInFlight: 900_000})
	h.round(40*mbps, ackOpts{inflight: 900_000})
	h.round(40*mbps, ackOpts{inflight: 900_000})
	if h.b.bwLo != unsetRate {
		t.Fatalf("bw_lo %d after a round that lost 1.96%%", h.b.bwLo)
	}
	// 10,500 bytes: 2.06%.
	h.b.OnCongestionEvent(h.now, &CongestionEvent{Cause: CauseLoss, LostBytes: 10_500, BytesInFlight: 900_000})
	h.round(40*mbps, ackOpts{inflight: 900_000})
	if h.b.bwLo != 7*mbps*8 {
		t.Fatalf("bw_lo %d, want %d (0.7 x 80 Mbit/s)", h.b.bwLo, 7*mbps*8)
	}
	if h.b.bw != h.b.bwLo {
		t.Fatalf("bw %d, want bw_lo %d", h.b.bw, h.b.bwLo)
	}
	// A round without loss leaves the bound.
	h.round(80*mbps, ackOpts{inflight: 900_000})
	if h.b.bwLo != 7*mbps*8 {
		t.Fatalf("bw_lo %d after a clean round", h.b.bwLo)
	}
	for h.b.state != BBRProbeBWRefill {
		h.round(80*mbps, ackOpts{inflight: 900_000})
	}
	if h.b.bwLo != unsetRate || h.b.bw != 80*mbps {
		t.Fatalf("REFILL: bw_lo %d, bw %d", h.b.bwLo, h.b.bw)
	}
}

// An application-limited sample below the estimate does not enter the
// bandwidth filter; one above it does.
func TestBBRAppLimitedSamples(t *testing.T) {
	h := newBBRHarness(t, nil)
	h.round(10*mbps, ackOpts{inflight: 100_000})
	h.round(5*mbps, ackOpts{inflight: 100_000, appLimited: true})
	if h.b.maxBw != 10*mbps {
		t.Fatalf("max_bw %d after a low app-limited sample, want %d", h.b.maxBw, 10*mbps)
	}
	h.round(12*mbps, ackOpts{inflight: 100_000, appLimited: true})
	if h.b.maxBw != 12*mbps {
		t.Fatalf("max_bw %d after a higher app-limited sample, want %d", h.b.maxBw, 12*mbps)
	}
	// Application-limited round trips do not count toward a full pipe.
	for range 5 {
		h.round(12*mbps, ackOpts{inflight: 100_000, appLimited: true})
	}
	h.wantState(BBRStartup)
}

// ProbeRTT: 5 s without an RTT sample at the minimum, BBR cuts the window
// to half the BDP; once the data in flight is there, it stays 200 ms and
// a round trip, then returns to CRUISE with the window it had.
func TestBBRProbeRTT(t *testing.T) {
	h := newBBRHarness(t, nil)
	toCruise(h)
	minStamp := h.b.probeRTTMinStamp
	cwnd := h.b.cwnd
	for h.b.state != BBRProbeRTT {
		h.round(80*mbps, ackOpts{inflight: 900_000, rtt: 120 * ms})
	}
	if h.now != minStamp+5*time.Second+h.rtt {
		t.Fatalf("ProbeRTT at %v, want the first ACK after %v", h.now, minStamp+5*time.Second)
	}
	// Half the BDP: 80 Mbit/s x 100 ms / 2.
	if h.b.cwnd != 500_000 {
		t.Fatalf("ProbeRTT cwnd %d, want 500000", h.b.cwnd)
	}
	h.round(80*mbps, ackOpts{inflight: 500_000, appLimited: true})
	entered := h.now
	h.wantState(BBRProbeRTT)
	h.round(80*mbps, ackOpts{inflight: 500_000, appLimited: true})
	h.wantState(BBRProbeRTT)
	h.round(80*mbps, ackOpts{inflight: 500_000, appLimited: true})
	h.wantState(BBRProbeRTT)
	h.round(80*mbps, ackOpts{inflight: 500_000, appLimited: true})
	h.wantState(BBRProbeBWCruise)
	if h.now != entered+300*ms {
		t.Fatalf("ProbeRTT ended at %v, want %v (200 ms after %v, on the next ACK)", h.now, entered+300*ms, entered)
	}
	if h.b.cwnd < cwnd {
		t.Fatalf("cwnd %d after ProbeRTT, want at least %d", h.b.cwnd, cwnd)
	}
}

// A round trip with more than half its packets marked CE ends Startup;
// half of them does not.
func TestBBRECNEndsStartup(t *testing.T) {
	h := newBBRHarness(t, nil)
	h.round(10*mbps, ackOpts{inflight: 100_000})
	// The next round acknowledges 40 Mbit/s x 100 ms, 500,000 bytes: 416
	// packets of 1200.
	h.b.OnCongestionEvent(h.now, &CongestionEvent{Cause: CauseECN, CEPackets: 208})
	h.round(40*mbps, ackOpts{inflight: 400_000})
	h.wantState(BBRStartup)
	h.b.OnCongestionEvent(h.now, &CongestionEvent{Cause: CauseECN, CEPackets: 209})
	h.round(40*mbps, ackOpts{inflight: 900_000})
	h.wantState(BBRDrain)
	if h.b.inflightHi <= 0 || h.b.inflightHi == unsetBytes {
		t.Fatalf("inflight_hi %d after the ECN exit", h.b.inflightHi)
	}
}

// RTT samples within ProbeRTTSlack (1/64) of the minimum renew it, so a
// path whose delay never comes below it does not enter ProbeRTT; samples
// further above it do not, and ProbeRTT comes once the last renewal is 5 s
// old.
func TestBBRProbeRTTSlack(t *testing.T) {
	for _, tc := range []struct {
		rtt      time.Duration
		probeRTT bool
	}{{101562 * time.Microsecond, false}, {101563 * time.Microsecond, true}} {
		h := newBBRHarness(t, nil)
		toCruise(h)
		start, renewed := h.now, h.b.probeRTTMinStamp
		var entered time.Duration
		for h.now < start+6*time.Second && entered == 0 {
			h.round(80*mbps, ackOpts{inflight: 900_000, rtt: tc.rtt})
			if h.b.state == BBRProbeRTT {
				entered = h.now
			}
		}
		if got := entered != 0; got != tc.probeRTT {
			t.Fatalf("samples of %v: ProbeRTT %v (at %v), want %v", tc.rtt, got, entered, tc.probeRTT)
		}
		if tc.probeRTT && (entered <= renewed+5*time.Second || entered > renewed+5*time.Second+h.rtt) {
			t.Fatalf("ProbeRTT at %v, want the first ACK more than 5 s after %v", entered, renewed)
		}
	}
}
