package recovery

import (
	"testing"
	"time"
)

func wantRTT(t *testing.T, r *RTTStats, latest, minRTT, smoothed, variance time.Duration) {
	t.Helper()
	if r.LatestRTT() != latest || r.MinRTT() != minRTT || r.SmoothedRTT() != smoothed || r.RTTVar() != variance {
		t.Fatalf("latest %v min %v smoothed %v rttvar %v; want %v %v %v %v",
			r.LatestRTT(), r.MinRTT(), r.SmoothedRTT(), r.RTTVar(), latest, minRTT, smoothed, variance)
	}
}

func TestRTTInitialValues(t *testing.T) {
	r := newRTTStats(DefaultInitialRTT, DefaultMaxAckDelay)
	// RFC 9002 section 6.2.2: smoothed_rtt = kInitialRtt, rttvar = kInitialRtt/2.
	wantRTT(t, &r, 0, 0, 333*ms, 166500*time.Microsecond)
	if r.HasSample() {
		t.Fatal("HasSample before any sample")
	}
}

func TestRTTSamples(t *testing.T) {
	r := newRTTStats(DefaultInitialRTT, 25*ms)
	// First sample (section 5.3): min = smoothed = latest, rttvar = latest/2;
	// the ack delay is ignored.
	r.update(time.Second, 100*ms, 40*ms, false)
	wantRTT(t, &r, 100*ms, 100*ms, 100*ms, 50*ms)
	if !r.HasSample() || r.FirstSampleTime() != time.Second {
		t.Fatalf("first sample at %v, has %v", r.FirstSampleTime(), r.HasSample())
	}
	// Before confirmation the delay is not capped at max_ack_delay:
	// adjusted = 200 - 30 = 170; rttvar = (3*50 + |100-170|)/4 = 55;
	// smoothed = (7*100 + 170)/8 = 108.75.
	r.update(2*time.Second, 200*ms, 30*ms, false)
	wantRTT(t, &r, 200*ms, 100*ms, 108750*time.Microsecond, 55*ms)
}

func TestRTTAckDelayCappedAfterConfirmation(t *testing.T) {
	r := newRTTStats(DefaultInitialRTT, 25*ms)
	r.update(0, 100*ms, 0, true)
	// Confirmed: min(30, 25) = 25 is subtracted: adjusted 175;
	// rttvar = (150 + 75)/4 = 56.25; smoothed = (700 + 175)/8 = 109.375.
	r.update(ms, 200*ms, 30*ms, true)
	wantRTT(t, &r, 200*ms, 100*ms, 109375*time.Microsecond, 56250*time.Microsecond)
}

func TestRTTAckDelayNotBelowMinRTT(t *testing.T) {
	r := newRTTStats(DefaultInitialRTT, 25*ms)
	r.update(0, 100*ms, 0, true)
	// 110 - 20 would be below min_rtt (100): the sample is used as is
	// (section 5.3). rttvar = (150 + 10)/4 = 40; smoothed = (700+110)/8.
	r.update(ms, 110*ms, 20*ms, true)
	wantRTT(t, &r, 110*ms, 100*ms, 101250*time.Microsecond, 40*ms)
	// min_rtt follows the raw sample, never the adjusted one.
	r.update(2*ms, 90*ms, 20*ms, true)
	if r.MinRTT() != 90*ms {
		t.Fatalf("min_rtt %v, want 90ms", r.MinRTT())
	}
}

func TestPersistentCongestionDuration(t *testing.T) {
	r := newRTTStats(DefaultInitialRTT, 25*ms)
	r.update(0, 100*ms, 0, true)
	// (100 + max(4*50, 1) + 25) * 3 = 975 ms (section 7.6.1).
	if got := r.PersistentCongestionDuration(ms, 3); got != 975*ms {
		t.Fatalf("duration %v, want 975ms", got)
	}
	// kGranularity dominates a tiny rttvar.
	r = newRTTStats(DefaultInitialRTT, 0)
	r.update(0, time.Millisecond, 0, true)
	r.update(0, time.Millisecond, 0, true)
	r.update(0, time.Millisecond, 0, true)
	// rttvar = 0.5 ms * 9/16 = 281.25 us, so 4*rttvar = 1.125 ms, below
	// a 2 ms granularity: (1 + 2 + 0) * 1 = 3 ms.
	if got := r.PersistentCongestionDuration(2*ms, 1); got != 3*ms {
		t.Fatalf("duration %v, want 3ms", got)
	}
}

// The Initial space's ack delay is ignored (RFC 9002 section 5.3); the
// Handshake space's is used.
func TestSenderAckDelayPerSpace(t *testing.T) {
	s := newSender(t, testConfig(NewReno))
	send(t, s, 0, SpaceInitial, 0)
	ack(t, s, 100*ms, SpaceInitial, 0, rng(0, 0))
	send(t, s, 100*ms, SpaceInitial, 1)
	ack(t, s, 300*ms, SpaceInitial, 50*ms, rng(1, 1))
	// 200 ms sample, delay ignored: smoothed = (700 + 200)/8 = 112.5.
	if got := s.RTT().SmoothedRTT(); got != 112500*time.Microsecond {
		t.Fatalf("Initial: smoothed %v, want 112.5ms", got)
	}
	send(t, s, 300*ms, SpaceHandshake, 0)
	ack(t, s, 500*ms, SpaceHandshake, 50*ms, rng(0, 0))
	// 200 - 50 = 150: smoothed = (7*112.5 + 150)/8 = 117.1875.
	if got := s.RTT().SmoothedRTT(); got != 117187500*time.Nanosecond {
		t.Fatalf("Handshake: smoothed %v, want 117.1875ms", got)
	}
}

// An ACK that does not newly acknowledge the largest, or acknowledges only
// non-ack-eliciting packets, gives no sample (section 5.1).
func TestRTTSampleConditions(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	send(t, s, 0, SpaceApplication, 0)
	send(t, s, 10*ms, SpaceApplication, 1)
	ack(t, s, 100*ms, SpaceApplication, 0, rng(0, 1))
	if s.RTT().LatestRTT() != 90*ms {
		t.Fatalf("latest %v, want 90ms (largest acknowledged sent at 10 ms)", s.RTT().LatestRTT())
	}
	// Duplicate ACK: nothing newly acknowledged.
	ack(t, s, 500*ms, SpaceApplication, 0, rng(0, 1))
	if s.RTT().LatestRTT() != 90*ms {
		t.Fatal("a duplicate ACK produced a sample")
	}
	// An ACK-only packet acknowledged alone gives no sample.
	if err := s.OnPacketSent(500*ms, SentPacket{Space: SpaceApplication, Number: 2, Bytes: 50}); err != nil {
		t.Fatal(err)
	}
	ack(t, s, 600*ms, SpaceApplication, 0, rng(0, 2))
	if s.RTT().LatestRTT() != 90*ms {
		t.Fatal("an ACK of a non-ack-eliciting packet produced a sample")
	}
}

// AdjustedRTT subtracts the ack delay down to min_rtt, where section 5.3's
// adjustment keeps the whole sample: a peer that delays each ACK by
// max_ack_delay must not look like a growing queue.
func TestRTTAdjusted(t *testing.T) {
	r := newRTTStats(DefaultInitialRTT, 25*ms)
	r.update(time.Second, 603*ms, 0, true)
	if got := r.AdjustedRTT(); got != 603*ms {
		t.Fatalf("first sample adjusted to %v", got)
	}
	// 625 - 25 = 600 is below min_rtt (603): section 5.3 keeps 625 for
	// the smoothed RTT, the adjusted sample is min_rtt.
	r.update(2*time.Second, 625*ms, 25*ms, true)
	if got := r.AdjustedRTT(); got != 603*ms {
		t.Fatalf("adjusted %v, want min_rtt 603ms", got)
	}
	if got, want := r.SmoothedRTT(), (7*603*ms+625*ms)/8; got != want {
		t.Fatalf("smoothed %v, want %v (sample kept whole)", got, want)
	}
	// The delay is capped at max_ack_delay once confirmed: 700 - 25.
	r.update(3*time.Second, 700*ms, 40*ms, true)
	if got := r.AdjustedRTT(); got != 675*ms {
		t.Fatalf("adjusted %v, want 675ms", got)
	}
}
