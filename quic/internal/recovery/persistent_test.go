package recovery

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// rfcPersistentRun plays the example of RFC 9002 section 7.6.2 with one
// unit = 1 s, after a handshake that gave a 200 ms RTT sample: packets #1
// to #7 at t = 0..6, PTO probes #8 at t = 8 and #9 at t = 12, the ACK of #1
// at t = 1.2 and the ACK of #9 (with extra ranges, if any) at t = 12.2.
func rfcPersistentRun(t *testing.T, extra ...wire.AckRange) (*Sender, *Result, time.Duration) {
	t.Helper()
	s := newSender(t, testConfig(NewReno))
	send(t, s, 0, SpaceInitial, 0)
	ack(t, s, 200*ms, SpaceInitial, 0, rng(0, 0))
	if _, err := s.DiscardSpace(200*ms, SpaceInitial); err != nil {
		t.Fatal(err)
	}
	base := time.Second
	s.ConfirmHandshake(base)
	at := func(units float64) time.Duration { return base + time.Duration(units*float64(time.Second)) }
	times := []float64{0, 1, 2, 3, 4, 5, 6, 8, 12}
	for i, u := range times {
		send(t, s, at(u), SpaceApplication, uint64(i+1))
	}
	ack(t, s, at(1.2), SpaceApplication, 0, rng(1, 1))
	ranges := append(rng(9, 9), extra...)
	ranges = append(ranges, rng(1, 1)...)
	res := ack(t, s, at(12.2), SpaceApplication, 0, ranges)
	return s, res, base
}

func TestPersistentCongestionRFCExample(t *testing.T) {
	s, res, _ := rfcPersistentRun(t)
	// "Packets 2 through 8 are declared lost when the acknowledgment for
	// packet 9 is received at t = 12.2."
	if !equalNumbers(res.Lost, 2, 3, 4, 5, 6, 7, 8) {
		t.Fatalf("lost %v, want 2..8", numbers(res.Lost))
	}
	// With this run's estimator the duration is (0.309375 + 4*0.275 +
	// 0.025) * 3 = 4.303125 s; the lost packets span 7 s.
	if d := s.RTT().PersistentCongestionDuration(ms, 3); d != 4303125*time.Microsecond {
		t.Fatalf("duration %v, want 4.303125s", d)
	}
	if !res.PersistentCongestion || s.Stats().PersistentCongestions != 1 {
		t.Fatal("persistent congestion not established")
	}
	// RFC 9002 section 7.6.2: the window drops to kMinimumWindow, 2400,
	// and the recovery period is cleared (appendix B.8), so the ACK of #9
	// then grows it in slow start (appendix B.5): 3600. The slow start
	// threshold is half the window before: (12000 + 2 * 1200) / 2.
	wantWindow(t, s, 3600, 7200, PhaseSlowStart)
	// The example's own numbers: the period 8 - 1 = 7 exceeds the
	// duration 2 * 3 = 6; a duration of 7 is not exceeded.
	lost := append([]PacketInfo(nil), res.Lost...)
	sp := &s.spaces[SpaceApplication]
	first := s.RTT().FirstSampleTime()
	if !establishesPersistentCongestion(sp, lost, first, 6*time.Second) {
		t.Fatal("RFC example: duration 6 not exceeded by the period 7")
	}
	if establishesPersistentCongestion(sp, lost, first, 7*time.Second) {
		t.Fatal("a period equal to the duration established persistent congestion")
	}
}

// An acknowledged packet between the lost ones breaks the period.
func TestPersistentCongestionBrokenByAck(t *testing.T) {
	s, res, _ := rfcPersistentRun(t, rng(5, 5)...)
	if !equalNumbers(res.Lost, 2, 3, 4, 6, 7, 8) {
		t.Fatalf("lost %v", numbers(res.Lost))
	}
	if res.PersistentCongestion {
		t.Fatal("persistent congestion across an acknowledged packet")
	}
	// One reduction, to half of 14400; #9 was sent before the recovery
	// period began, so its ACK does not grow the window.
	wantWindow(t, s, 7200, 7200, PhaseRecovery)
	// Runs 2..4 (2 s) and 6..8 (3 s): a 2.5 s duration is exceeded by the
	// second run only, which is enough.
	lost := append([]PacketInfo(nil), res.Lost...)
	sp := &s.spaces[SpaceApplication]
	first := s.RTT().FirstSampleTime()
	if !establishesPersistentCongestion(sp, lost, first, 2500*ms) {
		t.Fatal("the 3 s run did not exceed 2.5 s")
	}
	if establishesPersistentCongestion(sp, lost, first, 3*time.Second) {
		t.Fatal("no run exceeds 3 s")
	}
}

// Packets sent before the first RTT sample never establish persistent
// congestion (RFC 9002 section 7.6.2).
func TestPersistentCongestionNeedsSample(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	for i := range uint64(8) {
		send(t, s, time.Duration(i)*time.Second, SpaceApplication, i)
	}
	send(t, s, 20*time.Second, SpaceApplication, 8)
	res := ack(t, s, 20*time.Second+100*ms, SpaceApplication, 0, rng(8, 8))
	if len(res.Lost) != 8 || res.PersistentCongestion {
		t.Fatalf("lost %v persistent %v", numbers(res.Lost), res.PersistentCongestion)
	}
}
