package recovery

import "testing"

// bbrResumed returns a BBR Sender in Careful Resume's Unvalidated Phase,
// as resumedSender does for NewReno and CUBIC: the initial window (packets
// 0-9) sent at 0 and acknowledged at 100 ms, which measures 12000 bytes
// per 100 ms and grows the window to 24000 bytes, then packets 10-29 fill
// it at 100 ms. BBR then probes at half the saved bandwidth, 300 packets
// per 100 ms: 3.6 MB/s, with that rate's 360000 bytes of window.
func bbrResumed(t *testing.T) (*Sender, *bbr) {
	t.Helper()
	s := confirmed(t, testConfig(BBR))
	b := s.cc.(*bbr)
	if !s.StartCarefulResume(0, testSaved) {
		t.Fatal("StartCarefulResume refused a usable state for BBR")
	}
	sendRange(t, s, 0, 0, 9)
	ackRanges(t, s, 100*ms, 0, 9)
	wantPhase(t, s, ResumeReconnaissance)
	wantCwnd(t, s, 24000)
	if b.maxBw != 120_000 {
		t.Fatalf("max_bw %d after the initial window, want 120000", b.maxBw)
	}
	sendRange(t, s, 100*ms, 10, 29)
	wantPhase(t, s, ResumeUnvalidated)
	wantCwnd(t, s, testJump)
	if got := s.PacingRate(); got != 3_600_000 {
		t.Fatalf("pacing %d B/s while unvalidated, want the probe's 3600000", got)
	}
	return s, b
}

// A validated jump: the samples taken while resuming leave the model as
// the Reconnaissance Phase left it (the ACK of packets 10-29 measured 2.4
// MB/s, above its 120000 B/s); when the last unvalidated packet is
// acknowledged the probe rate enters the bandwidth filter, and Startup
// goes on from it at its gain of 2.77, less the 1% margin.
func TestBBRResumeValidated(t *testing.T) {
	s, b := bbrResumed(t)
	sendRange(t, s, 100*ms, 30, 309)
	wantPhase(t, s, ResumeValidating)
	ackRanges(t, s, 200*ms, 10, 29)
	wantPhase(t, s, ResumeValidating)
	if b.maxBw != 120_000 || s.PacingRate() != 3_600_000 {
		t.Fatalf("max_bw %d, pacing %d while validating: want the Reconnaissance Phase's 120000 and the probe's 3600000",
			b.maxBw, s.PacingRate())
	}
	ackRanges(t, s, 300*ms, 10, 309)
	wantPhase(t, s, ResumeNormal)
	wantStats(t, s, 1, 1, 1, 0, 1)
	if b.maxBw != 3_600_000 || b.bw != 3_600_000 || b.state != BBRStartup {
		t.Fatalf("max_bw %d, bw %d, %v after validation; want the probe rate 3600000 in Startup", b.maxBw, b.bw, b.state)
	}
	if got, want := s.PacingRate(), uint64(2.77*3_600_000*0.99); got != want {
		t.Fatalf("pacing %d B/s after validation, want %d", got, want)
	}
	// Packets sent after Careful Resume are the model's again: 100
	// packets over 100 ms, 1.2 MB/s, does not lower the estimate, and
	// Startup's window grows by what they deliver.
	cwnd := s.CongestionWindow()
	sendRange(t, s, 300*ms, 310, 409)
	ackRanges(t, s, 400*ms, 10, 409)
	if b.maxBw != 3_600_000 || s.CongestionWindow() != cwnd+100*seg {
		t.Fatalf("max_bw %d, window %d after a round of Startup; want 3600000 and %d", b.maxBw, s.CongestionWindow(), cwnd+100*seg)
	}
}

// Validating: once the ACKs of the unvalidated packets show the path
// carrying the probe (140 packets in 50 ms, 3.36 MB/s, at least 90% of
// its 3.6 MB/s), the probe rate enters the model and Startup's gain and
// window apply again before the last unvalidated packet is acknowledged;
// Startup expects the saved bandwidth, 7.2 MB/s, as its full bandwidth.
func TestBBRResumeValidatingGrowth(t *testing.T) {
	s, b := bbrResumed(t)
	sendRange(t, s, 100*ms, 30, 309)
	wantPhase(t, s, ResumeValidating)
	ackRanges(t, s, 200*ms, 10, 29)
	if b.maxBw != 120_000 || s.PacingRate() != 3_600_000 {
		t.Fatalf("max_bw %d, pacing %d at the first ACK of the Validating Phase: want 120000 and the probe's 3600000", b.maxBw, s.PacingRate())
	}
	ackRanges(t, s, 250*ms, 10, 169)
	wantPhase(t, s, ResumeValidating)
	if b.maxBw != 3_600_000 || b.fullBw != 7_200_000 || b.state != BBRStartup {
		t.Fatalf("max_bw %d, full_bw %d, %v once the path carries the probe; want 3600000, 7200000 in Startup", b.maxBw, b.fullBw, b.state)
	}
	if got, want := s.PacingRate(), uint64(2.77*3_600_000*0.99); got != want {
		t.Fatalf("pacing %d B/s while validating, want Startup's %d", got, want)
	}
}

// Random loss while unvalidated is not congestion for BBR: one packet
// lost of the 100 sent since the jump (1%) stays below its 2% loss
// threshold, and the jump goes on.
func TestBBRResumeRandomLoss(t *testing.T) {
	s, _ := bbrResumed(t)
	sendRange(t, s, 100*ms, 30, 129)
	// Packet 12 is lost: 29 is 3 above it.
	res := ackRanges(t, s, 200*ms, 13, 29, 10, 11)
	if !equalNumbers(res.Lost, 12) {
		t.Fatalf("lost %v, want [12]", numbers(res.Lost))
	}
	wantPhase(t, s, ResumeUnvalidated)
	if got := s.PacingRate(); got != 3_600_000 {
		t.Fatalf("pacing %d B/s after a random loss, want the probe's 3600000", got)
	}
}

// Congestion while unvalidated: losses above 2% of what was sent since the
// jump (packets 12, 14 and 16, 3600 bytes, of the 120000 sent) start Safe
// Retreat. The losses come before the ACK's deliveries, so PipeSize is the
// 24000 bytes in flight at the jump: the window becomes PipeSize/2, 12000
// bytes, paced at that window per minimum RTT (120000 B/s), and is held
// until the last unvalidated packet is acknowledged; nothing measured
// while resuming enters the model. The retreat's rate then enters the
// bandwidth filter, and Startup expects twice it (PipeSize per round trip)
// as its full bandwidth, one round trip from its end. A sample of a packet
// sent while resuming, acknowledged after the end, is discarded; one sent
// after it is taken.
func TestBBRResumeSafeRetreat(t *testing.T) {
	s, b := bbrResumed(t)
	sendRange(t, s, 100*ms, 30, 129)
	res := ackRanges(t, s, 200*ms, 17, 29, 15, 15, 13, 13, 10, 11)
	if !equalNumbers(res.Lost, 12, 14, 16) {
		t.Fatalf("lost %v, want [12 14 16]", numbers(res.Lost))
	}
	wantPhase(t, s, ResumeSafeRetreat)
	wantCwnd(t, s, 12000)
	if got := s.PacingRate(); got != 120_000 {
		t.Fatalf("pacing %d B/s in Safe Retreat, want PipeSize/2 per minimum RTT, 120000", got)
	}
	ackRanges(t, s, 300*ms, 17, 100, 15, 15, 13, 13, 10, 11)
	wantCwnd(t, s, 12000)
	ackRanges(t, s, 301*ms, 17, 128, 15, 15, 13, 13, 10, 11)
	wantPhase(t, s, ResumeSafeRetreat)
	sendRange(t, s, 301*ms, 130, 179)
	ackRanges(t, s, 302*ms, 17, 129, 15, 15, 13, 13, 10, 11)
	wantPhase(t, s, ResumeNormal)
	wantStats(t, s, 1, 1, 0, 1, 1)
	if b.maxBw != 120_000 || b.res.active || b.fullBw != 240_000 || b.fullBwCount != b.cfg.FullBwCount-1 {
		t.Fatalf("max_bw %d, full_bw %d (count %d) after Safe Retreat; want 120000 and 240000 (count %d)",
			b.maxBw, b.fullBw, b.fullBwCount, b.cfg.FullBwCount-1)
	}
	// Packets 130-179 left while resuming: their sample is discarded.
	// Packets 180-229, sent after, measure 50 packets in 100 ms: 600000
	// B/s.
	ackRanges(t, s, 401*ms, 17, 179, 15, 15, 13, 13, 10, 11)
	if b.maxBw != 120_000 {
		t.Fatalf("max_bw %d from packets sent while resuming, want 120000", b.maxBw)
	}
	sendRange(t, s, 401*ms, 180, 229)
	ackRanges(t, s, 501*ms, 17, 229, 15, 15, 13, 13, 10, 11)
	if b.maxBw != 600_000 {
		t.Fatalf("max_bw %d after a round past Careful Resume, want 600000", b.maxBw)
	}
}

// A jump the application does not use ends rate limited (a flight of 40
// packets, within PipeSize's 50): the probe's window was never full, and
// the probe rate does not enter the model.
func TestBBRResumeRateLimited(t *testing.T) {
	s, b := bbrResumed(t)
	sendRange(t, s, 100*ms, 30, 39)
	ackRanges(t, s, 200*ms, 10, 39)
	wantPhase(t, s, ResumeNormal)
	if b.maxBw != 120_000 {
		t.Fatalf("max_bw %d after a rate-limited resume, want 120000", b.maxBw)
	}
}
