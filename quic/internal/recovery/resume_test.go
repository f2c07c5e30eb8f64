package recovery

import (
	"testing"
	"time"
)

// The unit tests of Careful Resume script sends and ACKs on a Sender with
// pacing, HyStart++ and the long-RTT slow start off (testConfig): the
// initial window is 12000 bytes (10 packets of seg bytes), the RTT 100 ms,
// and the saved state 600 packets per 100 ms, so jump_cwnd is 360000
// bytes (300 packets).
var testSaved = ResumeState{SavedCwnd: 600 * seg, SavedRTT: 100 * ms}

const testJump = 300 * seg

// sendRange sends packets lo..hi of the application space at now.
func sendRange(t *testing.T, s *Sender, now time.Duration, lo, hi uint64) {
	t.Helper()
	for pn := lo; pn <= hi; pn++ {
		send(t, s, now, SpaceApplication, pn)
	}
}

// ackRanges acknowledges the given ranges (pairs smallest, largest, highest
// first) at now.
func ackRanges(t *testing.T, s *Sender, now time.Duration, pairs ...uint64) *Result {
	t.Helper()
	return ack(t, s, now, SpaceApplication, 0, rng(pairs...))
}

func wantPhase(t *testing.T, s *Sender, want ResumePhase) {
	t.Helper()
	if got := s.ResumePhase(); got != want {
		t.Fatalf("phase %v, want %v", got, want)
	}
}

func wantCwnd(t *testing.T, s *Sender, want int) {
	t.Helper()
	if got := s.CongestionWindow(); got != want {
		t.Fatalf("window %d, want %d", got, want)
	}
}

// resumedSender returns a Sender of alg in Careful Resume's Unvalidated
// Phase: the initial window (packets 0-9) sent at 0 and acknowledged at
// 100 ms, then packets 10-29 fill the window of 24000 bytes at 100 ms,
// which makes the next packet, 30, the first unvalidated one. PipeSize is
// 24000 bytes.
func resumedSender(t *testing.T, alg Algorithm) *Sender {
	t.Helper()
	s := confirmed(t, testConfig(alg))
	if !s.StartCarefulResume(0, testSaved) {
		t.Fatal("StartCarefulResume refused a usable state")
	}
	wantPhase(t, s, ResumeReconnaissance)
	sendRange(t, s, 0, 0, 9)
	ackRanges(t, s, 100*ms, 0, 9)
	// Confirmed, but the window is not full: the jump waits.
	wantPhase(t, s, ResumeReconnaissance)
	wantCwnd(t, s, 24000)
	sendRange(t, s, 100*ms, 10, 28)
	wantPhase(t, s, ResumeReconnaissance)
	sendRange(t, s, 100*ms, 29, 29)
	wantPhase(t, s, ResumeUnvalidated)
	wantCwnd(t, s, testJump)
	if s.resume.pipeSize != 24000 {
		t.Fatalf("PipeSize %d on entry, want the flight size 24000", s.resume.pipeSize)
	}
	return s
}

func wantStats(t *testing.T, s *Sender, recon, unval, validating, retreat, normal uint64) {
	t.Helper()
	st := s.Stats()
	got := [5]uint64{st.ResumeReconnaissance, st.ResumeUnvalidated, st.ResumeValidating, st.ResumeSafeRetreat, st.ResumeNormal}
	if want := [5]uint64{recon, unval, validating, retreat, normal}; got != want {
		t.Fatalf("phases entered %v, want %v", got, want)
	}
}

// The whole jump: Unvalidated until the flight reaches jump_cwnd
// (last_unvalidated_packet_sent), Validating with the window at the
// flight size and slow start growth, Normal when the last unvalidated
// packet is acknowledged. The window is then saved_cwnd: the saved rate in
// the second round trip of resumed sending.
func TestResumeNoLoss(t *testing.T) {
	for _, alg := range []Algorithm{NewReno, CUBIC} {
		t.Run(alg.String(), func(t *testing.T) {
			s := resumedSender(t, alg)
			// Unvalidated packets are paced at jump_cwnd per smoothed
			// RTT: 360000 bytes per 100 ms.
			if got := s.resume.PacingRate(&s.rtt); got != 3_600_000 {
				t.Fatalf("pacing rate %d B/s, want 3600000", got)
			}
			sendRange(t, s, 100*ms, 30, 308)
			wantPhase(t, s, ResumeUnvalidated)
			sendRange(t, s, 100*ms, 309, 309) // the flight is 360000 bytes
			wantPhase(t, s, ResumeValidating)
			wantCwnd(t, s, testJump)
			if got := s.Stats().ResumeUnvalidatedBytes; got != 280*seg {
				t.Fatalf("%d bytes sent unvalidated, want %d", got, 280*seg)
			}
			// Validating: the normal slow start grows the window.
			ackRanges(t, s, 200*ms, 10, 29)
			wantPhase(t, s, ResumeValidating)
			wantCwnd(t, s, testJump+20*seg)
			ackRanges(t, s, 300*ms, 10, 309)
			wantPhase(t, s, ResumeNormal)
			wantCwnd(t, s, 600*seg)
			if s.resume.pipeSize != 320*seg {
				t.Fatalf("PipeSize %d, want %d", s.resume.pipeSize, 320*seg)
			}
			wantStats(t, s, 1, 1, 1, 0, 1)
			if s.InSlowStart() || s.ControllerState().SSThresh != 600*seg {
				t.Fatalf("ssthresh %d after a clean resume, want the window", s.ControllerState().SSThresh)
			}
		})
	}
}

// An ACK of the first unvalidated packet ends the Unvalidated Phase; a
// flight within PipeSize did not use the jump: the window becomes PipeSize
// and Careful Resume ends (rate_limited).
func TestResumeRateLimited(t *testing.T) {
	s := resumedSender(t, NewReno)
	sendRange(t, s, 100*ms, 30, 39)
	ackRanges(t, s, 200*ms, 10, 29)
	wantPhase(t, s, ResumeUnvalidated)
	wantCwnd(t, s, testJump) // no growth while unvalidated
	ackRanges(t, s, 200*ms+500*time.Microsecond, 10, 39)
	wantPhase(t, s, ResumeNormal)
	wantCwnd(t, s, 50*seg) // PipeSize: 20 + 20 + 10 packets
	wantStats(t, s, 1, 1, 0, 0, 1)
}

// More than one RTT in the Unvalidated Phase (rtt_exceeded) with a flight
// above PipeSize: Validating, with the window set to the flight size.
func TestResumeRTTExceeded(t *testing.T) {
	s := resumedSender(t, NewReno)
	sendRange(t, s, 100*ms, 30, 129)
	// The sample of packet 29 is 101 ms: the smoothed RTT is 100.125 ms,
	// and 101 ms have passed since the jump.
	ackRanges(t, s, 201*ms, 10, 29)
	wantPhase(t, s, ResumeValidating)
	wantCwnd(t, s, 100*seg)
	if s.resume.lastUnvalidated != 129 {
		t.Fatalf("last unvalidated packet %d, want 129", s.resume.lastUnvalidated)
	}
	ackRanges(t, s, 210*ms, 10, 128)
	wantPhase(t, s, ResumeValidating)
	ackRanges(t, s, 211*ms, 10, 129)
	wantPhase(t, s, ResumeNormal)
	wantStats(t, s, 1, 1, 1, 0, 1)
}

// A loss in the Unvalidated Phase: Safe Retreat with the window at
// PipeSize/2, no growth, and on the acknowledgement of the last
// unvalidated packet a slow start threshold of PipeSize/2 (Beta 1/2).
func TestResumeSafeRetreatFromUnvalidated(t *testing.T) {
	for _, alg := range []Algorithm{NewReno, CUBIC} {
		t.Run(alg.String(), func(t *testing.T) {
			s := resumedSender(t, alg)
			sendRange(t, s, 100*ms, 30, 129)
			// Packet 12 is lost: 29 is 3 above it.
			res := ackRanges(t, s, 200*ms, 13, 29, 10, 11)
			if !equalNumbers(res.Lost, 12) {
				t.Fatalf("lost %v, want [12]", numbers(res.Lost))
			}
			wantPhase(t, s, ResumeSafeRetreat)
			// The loss is handled before the frame's ACKs: PipeSize
			// was 24000 bytes.
			wantCwnd(t, s, 12000)
			ackRanges(t, s, 300*ms, 13, 128, 10, 11)
			wantPhase(t, s, ResumeSafeRetreat)
			wantCwnd(t, s, 12000)
			ackRanges(t, s, 301*ms, 13, 129, 10, 11)
			wantPhase(t, s, ResumeNormal)
			wantCwnd(t, s, 12000)
			// PipeSize: 20 + 19 + 100 packets acknowledged.
			if got, want := s.ControllerState().SSThresh, 139*seg/2; got != want {
				t.Fatalf("ssthresh %d, want %d", got, want)
			}
			wantStats(t, s, 1, 1, 0, 1, 1)
			if s.ControllerState().Reductions != 1 {
				t.Fatalf("%d reductions, want Safe Retreat's one", s.ControllerState().Reductions)
			}
		})
	}
}

// A loss in the Validating Phase: Safe Retreat from the PipeSize of then;
// losses of packets sent before it do not reduce the window again.
func TestResumeSafeRetreatFromValidating(t *testing.T) {
	s := resumedSender(t, NewReno)
	sendRange(t, s, 100*ms, 30, 309)
	wantPhase(t, s, ResumeValidating)
	ackRanges(t, s, 200*ms, 10, 29)
	wantCwnd(t, s, testJump+20*seg)
	// Packets 100 and 150 are lost.
	ackRanges(t, s, 300*ms, 151, 200, 101, 149, 30, 99)
	wantPhase(t, s, ResumeSafeRetreat)
	wantCwnd(t, s, 20*seg) // PipeSize was 40 packets
	ackRanges(t, s, 305*ms, 151, 300, 101, 149, 30, 99)
	wantCwnd(t, s, 20*seg)
	ackRanges(t, s, 310*ms, 151, 309, 101, 149, 30, 99)
	wantPhase(t, s, ResumeNormal)
	if got, want := s.ControllerState().SSThresh, 318*seg/2; got != want {
		t.Fatalf("ssthresh %d, want %d", got, want)
	}
	if got := s.Stats().PacketsLost; got != 2 {
		t.Fatalf("%d packets lost, want 2", got)
	}
	if s.ControllerState().Reductions != 1 {
		t.Fatalf("%d reductions, want 1", s.ControllerState().Reductions)
	}
	wantStats(t, s, 1, 1, 1, 1, 1)
}

// Persistent congestion while unvalidated ends Careful Resume and
// collapses the window as usual (RFC 9959 section 3.6).
func TestResumePersistentCongestion(t *testing.T) {
	s := resumedSender(t, NewReno)
	s.signal(150*ms, CongestionEvent{Cause: CauseLoss, LargestSentTime: 100 * ms, Persistent: true})
	wantPhase(t, s, ResumeNormal)
	wantCwnd(t, s, 2*seg)
	wantStats(t, s, 1, 1, 0, 0, 1)
}

// Reconnaissance ends in Normal on congestion, and when the minimum RTT is
// at most half saved_rtt or more than ten times it (RFC 9959 sections 3.2
// and 4.2.1); the window is what normal congestion control made it.
func TestResumeReconnaissanceExits(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rtt       time.Duration
		lose      bool
		wantPhase ResumePhase
	}{
		{"confirmed", 100 * ms, false, ResumeReconnaissance},
		{"half", 50 * ms, false, ResumeNormal},
		{"above half", 51 * ms, false, ResumeReconnaissance},
		{"ten times", 1000 * ms, false, ResumeReconnaissance},
		{"above ten times", 1001 * ms, false, ResumeNormal},
		{"loss", 100 * ms, true, ResumeNormal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := confirmed(t, testConfig(NewReno))
			s.StartCarefulResume(0, testSaved)
			sendRange(t, s, 0, 0, 9)
			if tc.lose {
				ackRanges(t, s, tc.rtt, 4, 9, 0, 0)
			} else {
				ackRanges(t, s, tc.rtt, 0, 9)
			}
			wantPhase(t, s, tc.wantPhase)
			want := 24000
			if tc.lose {
				// Halved; the packets acknowledged were sent before
				// the recovery period and do not grow it.
				want = 6000
			}
			wantCwnd(t, s, want)
		})
	}
}

// RTT samples in the Validating Phase that show a queue of more than a
// quarter of the minimum RTT (less the ACK delay), eight in a row, mean the
// path no longer carries the jump: Safe Retreat, without waiting for a
// loss.
func TestResumeQueueRetreat(t *testing.T) {
	for _, tc := range []struct {
		name string
		// delays are the ACK delays of ACKs 1 ms apart whose samples
		// are 125 ms, 126 ms and so on: a delay of 2 ms or more makes
		// a sample less than 25 ms above the minimum RTT.
		delays []time.Duration
		want   ResumePhase
	}{
		{"eight late samples", []time.Duration{0, 0, 0, 0, 0, 0, 0, 0}, ResumeSafeRetreat},
		{"seven late samples", []time.Duration{0, 0, 0, 0, 0, 0, 0}, ResumeValidating},
		{"a run broken", []time.Duration{0, 0, 0, 0, 0, 0, 0, 10 * ms, 0, 0, 0, 0, 0, 0, 0}, ResumeValidating},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := resumedSender(t, NewReno)
			sendRange(t, s, 100*ms, 30, 309)
			ackRanges(t, s, 200*ms, 10, 29)
			wantPhase(t, s, ResumeValidating)
			for i, d := range tc.delays {
				ack(t, s, 225*ms+time.Duration(i)*ms, SpaceApplication, d, rng(10, uint64(30+i)))
			}
			wantPhase(t, s, tc.want)
			if tc.want == ResumeSafeRetreat {
				// PipeSize: 20 + 20 + 8 packets.
				wantCwnd(t, s, 24*seg)
			}
		})
	}
}
