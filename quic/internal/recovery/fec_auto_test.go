package recovery

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// autoPath returns a Sender under FECAuto (NewReno, no pacing) whose RTT
// estimator saw a minimum of minRTT (packet 0, sent at 0), then four
// samples of rtt (packets 1 to 4, sent at 1000 ms to 1003 ms and
// acknowledged one by one, the last at 1003 ms + rtt), with FEC sources 5
// to 9 sent at 1004 ms to 1008 ms still outstanding. The first sample is
// older than a smoothed RTT when the tests decide, at decideAt(rtt): only
// the four count as recent.
func autoPath(t *testing.T, cfg Config, minRTT, rtt time.Duration) *Sender {
	t.Helper()
	cfg.FECPolicy = FECAuto
	s := confirmed(t, cfg)
	sendSource(t, s, 0, 0)
	ack(t, s, minRTT, SpaceApplication, 0, rng(0, 0))
	for pn := uint64(1); pn <= 9; pn++ {
		sendSource(t, s, time.Second+time.Duration(pn-1)*ms, pn)
	}
	for pn := uint64(1); pn <= 4; pn++ {
		ack(t, s, time.Second+time.Duration(pn-1)*ms+rtt, SpaceApplication, 0, rng(0, pn))
	}
	if got := s.RTT().MinRTT(); got != min(minRTT, rtt) {
		t.Fatalf("min RTT %v, want %v", got, min(minRTT, rtt))
	}
	return s
}

// decideAt is a millisecond after autoPath's last sample.
func decideAt(rtt time.Duration) time.Duration { return 1004*ms + rtt }

func sendSource(t *testing.T, s *Sender, now time.Duration, pn uint64) {
	t.Helper()
	err := s.OnPacketSent(now, SentPacket{Space: SpaceApplication, Number: pn, Bytes: 1200, AckEliciting: true, InFlight: true, Source: true, Ref: pn + 1000})
	if err != nil {
		t.Fatal(err)
	}
}

// recoverAt reports packet pn rebuilt by the peer at now and returns the
// stats and whether the window shrank.
func recoverAt(t *testing.T, s *Sender, now time.Duration, pn uint64) (Stats, bool) {
	t.Helper()
	window := s.CongestionWindow()
	res, err := s.OnRecovered(now, SpaceApplication, rng(pn, pn))
	if err != nil {
		t.Fatal(err)
	}
	if !equalNumbers(res.Recovered, pn) {
		t.Fatalf("recovered %v, want [%d]", numbers(res.Recovered), pn)
	}
	return s.Stats(), s.CongestionWindow() < window
}

// The decision on a rebuilt packet follows the queueing delay the recent
// RTT samples show: above half the minimum RTT (100 ms here, so 50 ms) it
// is congestion, at or below it the packet is delivered.
func TestFECAutoQueueDelay(t *testing.T) {
	for _, tc := range []struct {
		rtt        time.Duration
		congestion bool
	}{
		{100 * ms, false},
		{150 * ms, false},
		{151 * ms, true},
		{400 * ms, true},
	} {
		s := autoPath(t, testConfig(NewReno), 100*ms, tc.rtt)
		now := decideAt(tc.rtt)
		if got := s.RecoveredIsCongestion(now); got != tc.congestion {
			t.Errorf("RTT %v: RecoveredIsCongestion %v, want %v", tc.rtt, got, tc.congestion)
		}
		st, reduced := recoverAt(t, s, now, 5)
		if tc.congestion {
			if st.RecoveredAsCongestion != 1 || st.CongestionSignals != 1 || !reduced {
				t.Errorf("RTT %v: not signalled: reduced %v, %+v", tc.rtt, reduced, st)
			}
			continue
		}
		if st.RecoveredAsDelivered != 1 || st.CongestionSignals != 0 || reduced {
			t.Errorf("RTT %v: signalled: reduced %v, %+v", tc.rtt, reduced, st)
		}
	}
}

// On a short path the threshold is the floor, MinQueueDelay (5 ms): half
// of a 4 ms minimum would take the ACK timing of any path for a queue.
func TestFECAutoQueueDelayFloor(t *testing.T) {
	for _, tc := range []struct {
		rtt        time.Duration
		congestion bool
	}{{9 * ms, false}, {10 * ms, true}} {
		s := autoPath(t, testConfig(NewReno), 4*ms, tc.rtt)
		if got := s.RecoveredIsCongestion(decideAt(tc.rtt)); got != tc.congestion {
			t.Errorf("min 4 ms, RTT %v: RecoveredIsCongestion %v, want %v", tc.rtt, got, tc.congestion)
		}
	}
	cfg := testConfig(NewReno)
	cfg.FECAuto.MinQueueDelay = 20 * ms
	s := autoPath(t, cfg, 4*ms, 20*ms)
	if s.RecoveredIsCongestion(decideAt(20 * ms)) {
		t.Error("a 16 ms queue counted with a 20 ms floor")
	}
}

// One late sample among the recent ones is no queue: the smallest decides.
func TestFECAutoOneLateSample(t *testing.T) {
	s := autoPath(t, testConfig(NewReno), 100*ms, 100*ms)
	ack(t, s, 1108*ms, SpaceApplication, 0, rng(0, 9))
	// Packet 10 acknowledged 300 ms after it left (a delayed ACK, a
	// stalled receiver), 11 to 14 100 ms after.
	sendSource(t, s, 1110*ms, 10)
	for pn := uint64(11); pn <= 14; pn++ {
		sendSource(t, s, 1300*ms+time.Duration(pn)*ms, pn)
	}
	for pn := uint64(10); pn <= 14; pn++ {
		now := 1400*ms + time.Duration(pn)*ms
		ack(t, s, now, SpaceApplication, 0, rng(0, pn))
		// Alone in its smoothed RTT, the 300 ms sample is a queue.
		if got := s.RecoveredIsCongestion(now); got != (pn == 10) {
			t.Errorf("after packet %d: RecoveredIsCongestion %v", pn, got)
		}
	}
}

// Without a recent sample (the ACKs stopped, as in an outage) there is no
// evidence of a queue.
func TestFECAutoNoRecentSample(t *testing.T) {
	s := autoPath(t, testConfig(NewReno), 100*ms, 300*ms)
	if !s.RecoveredIsCongestion(decideAt(300 * ms)) {
		t.Fatal("a 200 ms queue not counted")
	}
	if s.RecoveredIsCongestion(5 * time.Second) {
		t.Error("samples seconds old still count")
	}
}

// A CE mark within a smoothed RTT makes a rebuilt packet congestion on a
// path whose RTT is flat.
func TestFECAutoECN(t *testing.T) {
	s := autoPath(t, testConfig(NewReno), 100*ms, 100*ms)
	sendSource(t, s, 1009*ms, 10)
	if _, err := s.OnAck(1104*ms, SpaceApplication, &Ack{Ranges: rng(0, 5), ECN: &wire.ECNCounts{ECT0: 6, CE: 1}}); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.ECNCEIncreases != 1 || st.CongestionSignals != 1 {
		t.Fatalf("CE not taken: %+v", st)
	}
	st, _ := recoverAt(t, s, 1110*ms, 6)
	if st.RecoveredAsCongestion != 1 || st.CongestionSignals != 2 {
		t.Errorf("rebuilt packet after CE: %+v", st)
	}
	if s.RecoveredIsCongestion(1110*ms + s.RTT().SmoothedRTT() + 1) {
		t.Error("a CE mark older than a smoothed RTT still counts")
	}
}

// Losses of packets FEC did not rebuild, at a tenth of the packets sent or
// more, make a rebuilt packet congestion on a path whose RTT is flat; at a
// lower rate they do not.
func TestFECAutoUnrepairedLosses(t *testing.T) {
	for _, tc := range []struct {
		sent       int
		congestion bool
	}{{20, true}, {40, false}} {
		s := autoPath(t, testConfig(NewReno), 100*ms, 100*ms)
		// Plain packets 10.. at 1009 ms, all but three of the first
		// seven acknowledged: three unprotected packets lost.
		last := uint64(9 + tc.sent)
		for pn := uint64(10); pn <= last; pn++ {
			send(t, s, 1009*ms, SpaceApplication, pn)
		}
		res := ack(t, s, 1109*ms, SpaceApplication, 0, rng(16, last, 14, 14, 12, 12, 0, 10))
		if !equalNumbers(res.Lost, 11, 13, 15) {
			t.Fatalf("lost %v, want [11 13 15]", numbers(res.Lost))
		}
		// 5 packets sent at 1000 ms to 1004 ms, the rest in this period.
		if got := s.RecoveredIsCongestion(1110 * ms); got != tc.congestion {
			t.Errorf("3 unrepaired of %d sent: RecoveredIsCongestion %v, want %v", tc.sent+9, got, tc.congestion)
		}
	}
}

// A FEC source declared lost while the path shows a queue signals at
// once; on a flat path its signal waits for the FEC report (fec_defer.go).
func TestFECAutoDeclaredLoss(t *testing.T) {
	for _, tc := range []struct {
		rtt        time.Duration
		congestion bool
	}{{100 * ms, false}, {200 * ms, true}} {
		s := autoPath(t, testConfig(NewReno), 100*ms, tc.rtt)
		res := ack(t, s, 1008*ms+tc.rtt, SpaceApplication, 0, rng(6, 9, 0, 4))
		if !equalNumbers(res.Lost, 5) {
			t.Fatalf("RTT %v: lost %v, want [5]", tc.rtt, numbers(res.Lost))
		}
		st := s.Stats()
		if tc.congestion != (st.CongestionSignals == 1) || tc.congestion != (st.LossSignalsDeferred == 0) {
			t.Errorf("RTT %v: %+v", tc.rtt, st)
		}
	}
}

// A source whose loss signal waits, then rebuilt, signals if the report
// finds the path congested: here the queue grew in between.
func TestFECAutoLateRebuildCongested(t *testing.T) {
	s := autoPath(t, testConfig(NewReno), 100*ms, 100*ms)
	ack(t, s, 1108*ms, SpaceApplication, 0, rng(6, 9, 0, 4))
	if st := s.Stats(); st.LossSignalsDeferred != 1 || st.CongestionSignals != 0 {
		t.Fatalf("at the loss: %+v", st)
	}
	// Packets 10 to 17, acknowledged 160 ms after they left, within a
	// PTO period of the loss.
	for pn := uint64(10); pn <= 17; pn++ {
		sendSource(t, s, 1110*ms+time.Duration(pn-10)*ms, pn)
		ack(t, s, 1270*ms+time.Duration(pn-10)*ms, SpaceApplication, 0, rng(6, pn, 0, 4))
	}
	if st := s.Stats(); st.LossSignalsDeferred != 1 || st.CongestionSignals != 0 {
		t.Fatalf("before the report: %+v", st)
	}
	st, reduced := recoverAt(t, s, 1278*ms, 5)
	if st.CongestionSignals != 1 || st.LossSignalsAvoided != 0 || st.RecoveredAfterLoss != 1 || !reduced {
		t.Errorf("late rebuild on a queue: reduced %v, %+v", reduced, st)
	}
}

// A lost repair is no signal on a flat path and one on a queue.
func TestFECAutoLostRepair(t *testing.T) {
	for _, tc := range []struct {
		rtt        time.Duration
		congestion bool
	}{{100 * ms, false}, {200 * ms, true}} {
		s := autoPath(t, testConfig(NewReno), 100*ms, tc.rtt)
		if err := s.OnPacketSent(1009*ms, SentPacket{Space: SpaceApplication, Number: 10, Bytes: 1200, AckEliciting: true, InFlight: true, Repair: true}); err != nil {
			t.Fatal(err)
		}
		for pn := uint64(11); pn <= 13; pn++ {
			sendSource(t, s, 1009*ms, pn)
		}
		res := ack(t, s, 1009*ms+tc.rtt, SpaceApplication, 0, rng(11, 13, 0, 9))
		if !equalNumbers(res.Lost, 10) {
			t.Fatalf("lost %v, want [10]", numbers(res.Lost))
		}
		if signals := s.Stats().CongestionSignals; tc.congestion != (signals == 1) {
			t.Errorf("RTT %v: %d signals", tc.rtt, signals)
		}
	}
}

// The fixed policies answer as they always did.
func TestRecoveredIsCongestionPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy FECPolicy
		want   bool
	}{{FECSignal, true}, {FECHide, false}} {
		cfg := testConfig(NewReno)
		cfg.FECPolicy = tc.policy
		if got := confirmed(t, cfg).RecoveredIsCongestion(0); got != tc.want {
			t.Errorf("%v: %v", tc.policy, got)
		}
	}
	if FECAuto.String() != "auto" || FECPolicy(9).String() != "invalid" {
		t.Error("policy names")
	}
}

func TestFECAutoConfigValidation(t *testing.T) {
	for name, mutate := range map[string]func(*FECAutoConfig){
		"negative fraction": func(a *FECAutoConfig) { a.QueueDelayFraction = -1 },
		"huge fraction":     func(a *FECAutoConfig) { a.QueueDelayFraction = 11 },
		"negative floor":    func(a *FECAutoConfig) { a.MinQueueDelay = -ms },
		"no losses":         func(a *FECAutoConfig) { a.UnrepairedLosses = -1 },
		"rate above one":    func(a *FECAutoConfig) { a.UnrepairedRate = 2 },
	} {
		cfg := DefaultConfig()
		cfg.FECPolicy = FECAuto
		mutate(&cfg.FECAuto)
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	cfg := DefaultConfig()
	cfg.FECPolicy = FECPolicy(3)
	if _, err := New(cfg); err == nil {
		t.Error("unknown policy accepted")
	}
}
