package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

func defaultAckFreqConfig(t *testing.T) *AckFrequencyConfig {
	t.Helper()
	c, err := (&AckFrequencyConfig{}).withDefaults(25 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAckFrequencyTarget checks the policy's figures (ackfreq_send.go).
func TestAckFrequencyTarget(t *testing.T) {
	cfg := defaultAckFreqConfig(t)
	var s ackFreqSend
	s.start(time.Millisecond, 25*time.Millisecond)
	for _, tc := range []struct {
		name    string
		cwnd    int
		srtt    time.Duration
		perAck  int
		delay   time.Duration
		reorder uint64
	}{
		// BBR's window of two bandwidth-delay products on geo-large:
		// 37.5 MB is 25,826 packets of 1452 bytes, 201 per ACK.
		{"geo-large", 37_500_000, 600 * time.Millisecond, 201, 75 * time.Millisecond, 3},
		{"geo-interop", 3_000_000, 603 * time.Millisecond, 16, 75375 * time.Microsecond, 3},
		{"small window", 256 * 1452, 600 * time.Millisecond, 2, 75 * time.Millisecond, 3},
		{"capped", 1 << 30, 2 * time.Second, 256, 100 * time.Millisecond, 3},
		{"short path", 100_000, 2 * time.Millisecond, 2, time.Millisecond, 3},
	} {
		got := s.target(cfg, tc.cwnd, 1452, tc.srtt, 3)
		if got != (ackFreqRequest{perAck: tc.perAck, delay: tc.delay, reorder: tc.reorder}) {
			t.Errorf("%s: %+v, want %d per ACK within %v", tc.name, got, tc.perAck, tc.delay)
		}
	}
	// The delay is whole microseconds and never below min_ack_delay.
	s.start(1234*time.Microsecond, 25*time.Millisecond)
	if got := s.target(cfg, 1e6, 1452, 9*time.Millisecond+7, 3); got.delay != 1234*time.Microsecond {
		t.Errorf("delay %v, want the peer's min_ack_delay", got.delay)
	}
	if got := s.target(cfg, 1e6, 1452, 80*time.Millisecond+7, 3); got.delay != 10*time.Millisecond {
		t.Errorf("delay %v, want 10 ms", got.delay)
	}
}

// sendPending builds a 1-RTT packet at now with the pending frame and
// returns the frame sent, if any.
func sendPending(t *testing.T, s *ackFreqSend, now time.Duration) (wire.AckFrequencyFrame, bool) {
	t.Helper()
	var w packetWriter
	w.reset(nil, 1400)
	keys, dcid := writerTestKeys(t)
	startTestPacket(t, &w, spaceInitial, 0, dcid, keys)
	s.appendFrame(now, &w)
	for _, f := range w.currentFrames() {
		if f.kind == fkAckFrequency {
			return s.want.frame(f.id), true
		}
	}
	return wire.AckFrequencyFrame{}, false
}

// TestAckFrequencyUpdates: no request while it would save nothing, then
// one, then at most one per smoothed RTT and only for a change that
// matters.
func TestAckFrequencyUpdates(t *testing.T) {
	const srtt = 600 * time.Millisecond
	var s ackFreqSend
	s.start(time.Millisecond, 25*time.Millisecond)
	small := ackFreqRequest{perAck: 2, delay: 75 * time.Millisecond, reorder: 3}
	s.update(time.Second, srtt, small)
	if s.pending {
		t.Fatal("a request that saves no ACK was queued")
	}
	big := ackFreqRequest{perAck: 100, delay: 75 * time.Millisecond, reorder: 3}
	s.update(time.Second, srtt, big)
	f, ok := sendPending(t, &s, time.Second)
	if !ok || f != (wire.AckFrequencyFrame{SequenceNumber: 0, AckElicitingThreshold: 99, RequestedMaxAckDelay: 75 * time.Millisecond, ReorderingThreshold: 3}) {
		t.Fatalf("first frame %+v, %v", f, ok)
	}
	// Within a smoothed RTT nothing goes, whatever the change.
	s.update(time.Second+srtt-1, srtt, ackFreqRequest{perAck: 256, delay: 75 * time.Millisecond, reorder: 3})
	if s.pending {
		t.Fatal("a second frame within one RTT")
	}
	// After it, a change below the hysteresis sends nothing ...
	s.update(time.Second+srtt, srtt, ackFreqRequest{perAck: 150, delay: 80 * time.Millisecond, reorder: 3})
	if s.pending {
		t.Fatal("a frame for 100 -> 150 packets per ACK")
	}
	// ... and a halving does.
	s.update(time.Second+srtt, srtt, ackFreqRequest{perAck: 50, delay: 75 * time.Millisecond, reorder: 3})
	if f, ok := sendPending(t, &s, time.Second+srtt); !ok || f.SequenceNumber != 1 || f.AckElicitingThreshold != 49 {
		t.Fatalf("second frame %+v, %v", f, ok)
	}
	if s.framesSent != 2 || !s.thins() {
		t.Fatalf("frames sent %d, thins %v", s.framesSent, s.thins())
	}
}

// TestAckFrequencyProbeTimeoutDelay follows the max_ack_delay the probe
// timeout uses (draft section 7): the largest of the one in force and
// those in flight; an acknowledged frame's delay is in force unless a
// newer frame was acknowledged before it.
func TestAckFrequencyProbeTimeoutDelay(t *testing.T) {
	var s ackFreqSend
	s.start(time.Millisecond, 25*time.Millisecond)
	send := func(now, delay time.Duration) uint64 {
		t.Helper()
		s.sent = false // let every call send
		s.update(now, time.Millisecond, ackFreqRequest{perAck: 64, delay: delay, reorder: 3})
		f, ok := sendPending(t, &s, now)
		if !ok {
			t.Fatal("no frame")
		}
		return f.SequenceNumber
	}
	check := func(want time.Duration, dirty bool) {
		t.Helper()
		if s.effective != want || s.dirty != dirty {
			t.Fatalf("effective %v (dirty %v), want %v (%v)", s.effective, s.dirty, want, dirty)
		}
		s.dirty = false
	}
	check(25*time.Millisecond, false)
	a := send(0, 75*time.Millisecond)
	check(75*time.Millisecond, true) // a larger delay counts at once
	s.onAcked(a)
	check(75*time.Millisecond, false)
	b := send(time.Second, 10*time.Millisecond)
	check(75*time.Millisecond, false) // a smaller one once acknowledged
	c := send(2*time.Second, 40*time.Millisecond)
	s.onAcked(c)
	check(40*time.Millisecond, true)
	s.onAcked(b) // older than c: the peer ignored it
	check(40*time.Millisecond, false)
	d := send(3*time.Second, 90*time.Millisecond)
	check(90*time.Millisecond, true)
	s.onLost(d) // the newest frame lost: sent again, with a new number
	check(40*time.Millisecond, true)
	if !s.pending {
		t.Fatal("the lost request is not sent again")
	}
	if f, ok := sendPending(t, &s, 4*time.Second); !ok || f.SequenceNumber != d+1 {
		t.Fatalf("resent frame %+v, %v", f, ok)
	}
	e := s.nextSeq - 1
	send(5*time.Second, 50*time.Millisecond)
	s.onLost(e) // an older frame lost: nothing to resend
	if s.pending {
		t.Fatal("an outdated request resent")
	}
}

// TestAckFrequencyInFlightBound: no new frame while maxAckFreqInFlight
// are unacknowledged.
func TestAckFrequencyInFlightBound(t *testing.T) {
	var s ackFreqSend
	s.start(time.Millisecond, 25*time.Millisecond)
	for i := range maxAckFreqInFlight + 1 {
		now := time.Duration(i) * time.Second
		s.update(now, time.Millisecond, ackFreqRequest{perAck: 4 << i, delay: 75 * time.Millisecond, reorder: 3})
		_, ok := sendPending(t, &s, now)
		if ok != (i < maxAckFreqInFlight) {
			t.Fatalf("frame %d sent: %v", i, ok)
		}
	}
}

func TestAckFrequencyConfigDefaults(t *testing.T) {
	c := defaultAckFreqConfig(t)
	if c.MinAckDelay != time.Millisecond || c.AcksPerRTT != 128 || c.MaxPacketsPerAck != 256 || c.MaxRequestedAckDelay != 100*time.Millisecond {
		t.Errorf("defaults %+v", c)
	}
	for _, bad := range []AckFrequencyConfig{
		{MinAckDelay: 26 * time.Millisecond},
		{MinAckDelay: -1},
		{AcksPerRTT: -1},
		{MaxPacketsPerAck: 1},
		{MaxRequestedAckDelay: 1 << 14 * time.Millisecond},
	} {
		if _, err := bad.withDefaults(25 * time.Millisecond); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if c, err := (*AckFrequencyConfig)(nil).withDefaults(time.Millisecond); c != nil || err != nil {
		t.Error("nil config")
	}
}
