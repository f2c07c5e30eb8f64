package core

import (
	"errors"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// runReorderTable feeds packets one by one under a reordering threshold
// r with a threshold and delay that never trigger, sends an ACK whenever
// one is due, and returns which packets triggered one
// (draft-ietf-quic-ack-frequency section 6.2.1).
func runReorderTable(t *testing.T, r uint64, pns []uint64) []bool {
	t.Helper()
	p := ackPolicy{maxDelay: time.Hour, threshold: 1000, peerReorder: true, reorder: r}
	var a ackState
	var got []bool
	for _, pn := range pns {
		a.onPacket(0, pn, true, p)
		due := a.due(0)
		got = append(got, due)
		if due {
			a.onAckSent()
		}
	}
	return got
}

// TestReorderThresholdTables replays the draft's tables 1 and 2 exactly.
func TestReorderThresholdTables(t *testing.T) {
	for _, tc := range []struct {
		r    uint64
		pns  []uint64
		want []bool
	}{
		{3, []uint64{0, 1, 3, 4, 5, 8, 9, 10}, []bool{false, false, false, false, true, false, true, true}},
		{5, []uint64{0, 1, 3, 5, 6, 7, 8, 9}, []bool{false, false, false, false, false, true, false, true}},
		// 0: reordering alone never triggers an ACK (section 6.2).
		{0, []uint64{0, 5, 9, 2}, []bool{false, false, false, false}},
		// 1: a gap is acknowledged by the first packet after it, once,
		// and a late packet at once, as RFC 9000 section 13.2.1 has it.
		{1, []uint64{0, 2, 3, 4, 1}, []bool{false, true, false, false, true}},
	} {
		got := runReorderTable(t, tc.r, tc.pns)
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("threshold %d, packets %v: ACKs %v, want %v", tc.r, tc.pns, got, tc.want)
				break
			}
		}
	}
}

// TestReorderThresholdLateArrival: a packet arriving at or below Largest
// Acked - threshold is acknowledged at once, so that the sender sees its
// loss was spurious (section 6.2's second condition).
func TestReorderThresholdLateArrival(t *testing.T) {
	got := runReorderTable(t, 3, []uint64{0, 1, 3, 4, 5, 6, 7, 2})
	// 5 triggers (5-2 >= 3); then 6 and 7 do not (2 is reported); 2
	// arrives late: 2 <= 5-3.
	want := []bool{false, false, false, false, true, false, false, true}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ACKs %v, want %v", got, want)
		}
	}
}

func TestAckFrequencyReceiverRules(t *testing.T) {
	r := ackFreqRecv{minAckDelay: time.Millisecond}
	var te *wire.TransportError
	if err := r.onAckFrequency(&wire.AckFrequencyFrame{RequestedMaxAckDelay: 999 * time.Microsecond}); !errors.As(err, &te) || te.Code != wire.CodeProtocolViolation {
		t.Fatalf("delay below min_ack_delay: %v", err)
	}
	if r.inForce {
		t.Fatal("an invalid frame took effect")
	}
	apply := func(seq, threshold uint64, d time.Duration, reorder uint64) {
		t.Helper()
		if err := r.onAckFrequency(&wire.AckFrequencyFrame{SequenceNumber: seq, AckElicitingThreshold: threshold,
			RequestedMaxAckDelay: d, ReorderingThreshold: reorder}); err != nil {
			t.Fatal(err)
		}
	}
	apply(5, 9, 80*time.Millisecond, 0)
	if p := r.policy(0); p.threshold != 10 || p.maxDelay != 80*time.Millisecond || !p.peerReorder || p.reorder != 0 || p.immediate {
		t.Fatalf("policy %+v: an ACK after more than 9 packets, within 80 ms, never for reordering", p)
	}
	apply(5, 1, 2*time.Millisecond, 1) // not newer: ignored (section 4)
	apply(3, 1, 2*time.Millisecond, 1)
	if r.threshold != 10 || r.seq != 5 {
		t.Fatalf("an old sequence number took effect: %+v", r)
	}
	apply(6, 1<<62-1, time.Millisecond, 2)
	if r.threshold != maxPeerThreshold+1 || r.maxDelay != time.Millisecond {
		t.Fatalf("huge threshold: %+v", r)
	}
	if r.framesReceived != 4 {
		t.Errorf("valid frames received %d, want 4", r.framesReceived)
	}
}

// TestAckFrequencyPolicyReplacesHeuristic: the peer's request decides in
// the application space only; the handshake spaces stay immediate, and
// without a request the rate heuristic applies.
func TestAckFrequencyPolicyReplacesHeuristic(t *testing.T) {
	cfg := Config{AckElicitingThreshold: 2, MaxAckDelay: 25 * time.Millisecond}
	var rtt recovery.RTTStats
	var rate ackRate
	var peer ackFreqRecv
	if p := rate.policy(0, spaceApp, &cfg, &rtt, &peer); p.peerReorder || p.threshold != 2 {
		t.Fatalf("without a request: %+v", p)
	}
	peer.inForce, peer.threshold, peer.maxDelay, peer.reorder = true, 64, 75*time.Millisecond, 1
	if p := rate.policy(0, spaceApp, &cfg, &rtt, &peer); !p.peerReorder || p.threshold != 64 || p.maxDelay != 75*time.Millisecond {
		t.Fatalf("with a request: %+v", p)
	}
	if p := rate.policy(0, spaceHandshake, &cfg, &rtt, &peer); !p.immediate {
		t.Fatalf("handshake space: %+v", p)
	}
	if p := lostAckPolicy(spaceApp, &cfg, &peer); p.maxDelay != 75*time.Millisecond {
		t.Fatalf("lost ACK policy: %+v", p)
	}
}

// TestAckFrequencyCETransition: under a threshold above 1 only the first
// CE-marked packet of a run is acknowledged at once (section 6.3); without
// a request, every one is (RFC 9000 section 13.2.1).
func TestAckFrequencyCETransition(t *testing.T) {
	var r ackFreqRecv
	for i, ce := range []bool{true, true, false, true} {
		if !r.ceAckNow(ce) && ce {
			t.Fatalf("packet %d: CE not acknowledged at once without a request", i)
		}
	}
	r = ackFreqRecv{inForce: true, threshold: 10}
	var got []bool
	for _, ce := range []bool{false, true, true, true, false, true} {
		got = append(got, r.ceAckNow(ce))
	}
	want := []bool{false, true, false, false, false, true}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("CE ACKs %v, want %v", got, want)
		}
	}
	r = ackFreqRecv{inForce: true, threshold: 2, lastCE: true}
	if !r.ceAckNow(true) {
		t.Fatal("threshold 1 keeps RFC 9000's rule")
	}
}

// TestAckFrequencyQuietPeriod: under a peer's request, the first
// ack-eliciting packet after a round trip without an ACK sent is
// acknowledged at once (section 6.1); within it, the request holds.
func TestAckFrequencyQuietPeriod(t *testing.T) {
	r := ackFreqRecv{inForce: true, threshold: 100, maxDelay: 80 * time.Millisecond}
	p := r.policy(600 * time.Millisecond)
	var a ackState
	a.onPacket(0, 0, true, p)
	if a.due(0) {
		t.Fatal("first packet acknowledged at once")
	}
	a.onAckSentAt(80 * time.Millisecond)
	a.onPacket(600*time.Millisecond, 1, true, p)
	if a.due(600 * time.Millisecond) {
		t.Fatal("acknowledged at once within a round trip of the last ACK")
	}
	a.onAckSentAt(680 * time.Millisecond)
	a.onPacket(1281*time.Millisecond, 2, true, p)
	if !a.due(1281 * time.Millisecond) {
		t.Fatal("not acknowledged at once after a quiet round trip")
	}
}
