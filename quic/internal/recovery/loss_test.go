package recovery

import (
	"testing"
	"time"
)

// Packet threshold, time threshold and the loss timer (RFC 9002 sections
// 6.1.1, 6.1.2 and appendix A.10).
func TestLossThresholds(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	for pn := range uint64(5) {
		send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
	}
	res := ack(t, s, 100*ms, SpaceApplication, 0, rng(3, 3))
	if !equalNumbers(res.Acked, 3) {
		t.Fatalf("acked %v, want [3]", numbers(res.Acked))
	}
	// 3 >= 0 + kPacketThreshold: packet 0 is lost. Packets 1 and 2 are
	// neither 3 below nor older than the loss delay, 9/8 * 97 ms.
	if !equalNumbers(res.Lost, 0) {
		t.Fatalf("lost %v, want [0]", numbers(res.Lost))
	}
	if res.Lost[0].Ref != 1000 {
		t.Fatalf("lost Ref %d, want 1000", res.Lost[0].Ref)
	}
	if got := s.BytesInFlight(); got != 3*1200 {
		t.Fatalf("bytes in flight %d, want 3600", got)
	}
	// Loss timer: packet 1 was sent at 1 ms; 1 + 109.125 ms.
	wantDeadline(t, s, 110125*time.Microsecond)

	if res := s.OnTimeout(110 * ms); len(res.Lost) != 0 || res.Probe.Count != 0 {
		t.Fatal("a timeout before the deadline acted")
	}
	res = s.OnTimeout(110125 * time.Microsecond)
	if !equalNumbers(res.Lost, 1) {
		t.Fatalf("timeout lost %v, want [1]", numbers(res.Lost))
	}
	wantDeadline(t, s, 111125*time.Microsecond)
	res = s.OnTimeout(111125 * time.Microsecond)
	if !equalNumbers(res.Lost, 2) {
		t.Fatalf("timeout lost %v, want [2]", numbers(res.Lost))
	}
	if st := s.Stats(); st.PacketsLost != 3 || st.PacketsAcked != 1 {
		t.Fatalf("stats %+v", st)
	}
	// Packet 4 is above the largest acknowledged: never a loss candidate;
	// the PTO guards it.
	if s.BytesInFlight() != 1200 {
		t.Fatalf("bytes in flight %d, want 1200", s.BytesInFlight())
	}
}

func TestTimeThresholdOnAck(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	send(t, s, 0, SpaceApplication, 0)
	send(t, s, 200*ms, SpaceApplication, 1)
	// Sample 100 ms; loss delay 112.5 ms; packet 0 was sent 300 ms ago.
	res := ack(t, s, 300*ms, SpaceApplication, 0, rng(1, 1))
	if !equalNumbers(res.Lost, 0) {
		t.Fatalf("lost %v, want [0]", numbers(res.Lost))
	}
}

// The loss delay never goes below kGranularity.
func TestLossDelayGranularity(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	send(t, s, 0, SpaceApplication, 0)
	send(t, s, 10*time.Microsecond, SpaceApplication, 1)
	ack(t, s, 110*time.Microsecond, SpaceApplication, 0, rng(1, 1))
	// 9/8 * 100 us = 112.5 us < 1 ms: packet 0 is lost at 0 + 1 ms.
	wantDeadline(t, s, ms)
	if res := s.OnTimeout(ms); !equalNumbers(res.Lost, 0) {
		t.Fatalf("lost %v, want [0]", numbers(res.Lost))
	}
}

// A packet declared lost and acknowledged later is a spurious loss: it is
// reported in LateAcked and counted, not acknowledged twice.
func TestSpuriousLoss(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	for pn := range uint64(4) {
		send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
	}
	if res := ack(t, s, 100*ms, SpaceApplication, 0, rng(3, 3)); !equalNumbers(res.Lost, 0) {
		t.Fatalf("lost %v, want [0]", numbers(res.Lost))
	}
	res := ack(t, s, 110*ms, SpaceApplication, 0, rng(0, 3))
	if !equalNumbers(res.LateAcked, 0) || !equalNumbers(res.Acked, 1, 2) {
		t.Fatalf("late %v acked %v, want [0] and [1 2]", numbers(res.LateAcked), numbers(res.Acked))
	}
	if s.Stats().SpuriousLosses != 1 {
		t.Fatalf("spurious %d, want 1", s.Stats().SpuriousLosses)
	}
	if s.BytesInFlight() != 0 {
		t.Fatalf("bytes in flight %d", s.BytesInFlight())
	}
}

// Acknowledgement ranges with holes: packets in a gap are holes until
// acknowledged or lost; a later ACK fills the gap.
func TestAckRangesAndHoles(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	for pn := range uint64(10) {
		send(t, s, 0, SpaceApplication, pn)
	}
	res := ack(t, s, 50*ms, SpaceApplication, 0, rng(8, 9, 5, 6, 0, 2))
	if !equalNumbers(res.Acked, 0, 1, 2, 5, 6, 8, 9) {
		t.Fatalf("acked %v", numbers(res.Acked))
	}
	// 3 and 4 are 5 below the largest: lost; 7 is 2 below: a hole.
	if !equalNumbers(res.Lost, 3, 4) {
		t.Fatalf("lost %v, want [3 4]", numbers(res.Lost))
	}
	res = ack(t, s, 55*ms, SpaceApplication, 0, rng(5, 9, 0, 2))
	if !equalNumbers(res.Acked, 7) || len(res.Lost) != 0 {
		t.Fatalf("acked %v lost %v, want [7] and none", numbers(res.Acked), numbers(res.Lost))
	}
	if s.BytesInFlight() != 0 {
		t.Fatalf("bytes in flight %d", s.BytesInFlight())
	}
}
