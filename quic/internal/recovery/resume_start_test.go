package recovery

import (
	"testing"
	"time"
)

func TestResumePhaseNames(t *testing.T) {
	want := map[ResumePhase]string{
		ResumeOff: "off", ResumeReconnaissance: "reconnaissance", ResumeUnvalidated: "unvalidated",
		ResumeValidating: "validating", ResumeSafeRetreat: "safe_retreat", ResumeNormal: "normal", 99: "invalid",
	}
	for p, name := range want {
		if p.String() != name {
			t.Errorf("%d: %q, want %q", p, p.String(), name)
		}
	}
}

// StartCarefulResume is ignored when Careful Resume cannot or should not
// run, and the Sender then behaves as without it.
func TestStartCarefulResumeRefused(t *testing.T) {
	disabled := testConfig(NewReno)
	disabled.CarefulResume.Disable = true
	smallJump := testConfig(NewReno)
	smallJump.CarefulResume.MaxJump = 10 * seg
	for _, tc := range []struct {
		name  string
		cfg   Config
		st    ResumeState
		setup func(*testing.T, *Sender)
	}{
		{"disabled", disabled, testSaved, nil},
		{"no window", testConfig(NewReno), ResumeState{SavedRTT: 100 * ms}, nil},
		{"no RTT", testConfig(NewReno), ResumeState{SavedCwnd: 600 * seg}, nil},
		{"jump within the initial window", testConfig(NewReno), ResumeState{SavedCwnd: 20 * seg, SavedRTT: 100 * ms}, nil},
		{"max_jump within the initial window", smallJump, testSaved, nil},
		{"after congestion", testConfig(NewReno), testSaved, func(t *testing.T, s *Sender) {
			sendRange(t, s, 0, 0, 9)
			ackRanges(t, s, 100*ms, 4, 9, 0, 0)
		}},
		{"RTT below half the saved one", testConfig(NewReno), testSaved, func(t *testing.T, s *Sender) {
			sendRange(t, s, 0, 0, 9)
			ackRanges(t, s, 50*ms, 0, 9)
		}},
		{"not a window controller", testConfig(NewReno), testSaved, func(t *testing.T, s *Sender) {
			s.cc = plainController{s.cc}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := confirmed(t, tc.cfg)
			if tc.setup != nil {
				tc.setup(t, s)
			}
			if s.StartCarefulResume(100*ms, tc.st) {
				t.Fatal("accepted")
			}
			wantPhase(t, s, ResumeOff)
			if st := s.Stats(); st.ResumeReconnaissance != 0 {
				t.Fatal("a refused state counted as Reconnaissance")
			}
		})
	}
}

// plainController hides the resume hooks of the controller it holds.
type plainController struct{ Controller }

// A later state replaces the first while in Reconnaissance; once the jump
// was made, no state is taken.
func TestStartCarefulResumeAgain(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	if !s.StartCarefulResume(0, ResumeState{SavedCwnd: 100 * seg, SavedRTT: 100 * ms}) {
		t.Fatal("refused")
	}
	if !s.StartCarefulResume(10*ms, testSaved) {
		t.Fatal("a newer state refused in Reconnaissance")
	}
	sendRange(t, s, 10*ms, 0, 9)
	ackRanges(t, s, 110*ms, 0, 9)
	sendRange(t, s, 110*ms, 10, 29)
	wantPhase(t, s, ResumeUnvalidated)
	wantCwnd(t, s, testJump)
	if s.StartCarefulResume(120*ms, ResumeState{SavedCwnd: 2000 * seg, SavedRTT: 100 * ms}) {
		t.Fatal("a state accepted after the jump")
	}
	wantCwnd(t, s, testJump)
	wantStats(t, s, 1, 1, 0, 0, 0)
}

// MaxJump bounds jump_cwnd.
func TestResumeMaxJump(t *testing.T) {
	cfg := testConfig(CUBIC)
	cfg.CarefulResume.MaxJump = 100 * seg
	s := confirmed(t, cfg)
	s.StartCarefulResume(0, testSaved)
	sendRange(t, s, 0, 0, 9)
	ackRanges(t, s, 100*ms, 0, 9)
	sendRange(t, s, 100*ms, 10, 29)
	wantPhase(t, s, ResumeUnvalidated)
	wantCwnd(t, s, 100*seg)
}

// A state that arrives after the initial window was acknowledged starts
// Reconnaissance already confirmed: with a full window, the jump is
// immediate, with PipeSize the flight size.
func TestStartCarefulResumeLate(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	sendRange(t, s, 0, 0, 9)
	ackRanges(t, s, 100*ms, 0, 9)
	sendRange(t, s, 100*ms, 10, 29)
	if !s.StartCarefulResume(100*ms, testSaved) {
		t.Fatal("refused")
	}
	wantPhase(t, s, ResumeUnvalidated)
	wantCwnd(t, s, testJump)
	if s.resume.pipeSize != 20*seg {
		t.Fatalf("PipeSize %d, want %d", s.resume.pipeSize, 20*seg)
	}
	sendRange(t, s, 100*ms, 30, 30)
	if !s.resume.hasFirst || s.resume.firstUnvalidated != 30 {
		t.Fatalf("first unvalidated packet %d (%v), want 30", s.resume.firstUnvalidated, s.resume.hasFirst)
	}
}

// The initial data is acknowledged when an initial window was delivered or
// nothing sent remains in flight; until then, a full window does not jump.
func TestResumeInitialDataAcknowledged(t *testing.T) {
	t.Run("small flight", func(t *testing.T) {
		s := confirmed(t, testConfig(NewReno))
		s.StartCarefulResume(0, testSaved)
		sendRange(t, s, 0, 0, 2)
		ackRanges(t, s, 100*ms, 0, 2)
		wantCwnd(t, s, 13*seg)
		sendRange(t, s, 100*ms, 3, 14)
		wantPhase(t, s, ResumeReconnaissance)
		sendRange(t, s, 100*ms, 15, 15)
		wantPhase(t, s, ResumeUnvalidated)
	})
	t.Run("half acknowledged", func(t *testing.T) {
		s := confirmed(t, testConfig(NewReno))
		s.StartCarefulResume(0, testSaved)
		sendRange(t, s, 0, 0, 9)
		ackRanges(t, s, 100*ms, 0, 4)
		sendRange(t, s, 100*ms, 10, 19) // the window of 15 packets is full
		wantPhase(t, s, ResumeReconnaissance)
		ackRanges(t, s, 101*ms, 0, 9)
		wantPhase(t, s, ResumeReconnaissance)
		sendRange(t, s, 101*ms, 20, 29)
		wantPhase(t, s, ResumeUnvalidated)
		wantCwnd(t, s, testJump)
	})
}

// The initial data may be less than an initial window: a server held by
// the anti-amplification limit sends 8 packets before its first RTT
// sample. Their acknowledgement confirms the path; the jump then waits
// only for the window (13 packets after slow start's growth) to fill.
func TestResumeInitialDataBelowWindow(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	if !s.StartCarefulResume(0, testSaved) {
		t.Fatal("refused")
	}
	sendRange(t, s, 0, 0, 7)
	if s.resume.initialData != 8*seg {
		t.Fatalf("initial data %d, want %d", s.resume.initialData, 8*seg)
	}
	ackRanges(t, s, 100*ms, 0, 7)
	if !s.resume.ready {
		t.Fatal("the initial data acknowledged did not confirm the path")
	}
	wantCwnd(t, s, 18*seg)
	sendRange(t, s, 100*ms, 8, 24) // in flight: 17 packets of 18
	wantPhase(t, s, ResumeReconnaissance)
	sendRange(t, s, 100*ms, 25, 25)
	wantPhase(t, s, ResumeUnvalidated)
	wantCwnd(t, s, testJump)
	if s.resume.initialData != 8*seg {
		t.Fatalf("packets sent after the first RTT sample counted as initial data: %d", s.resume.initialData)
	}
}

// A state that arrives after the first RTT sample takes all that was sent
// before it as the initial data.
func TestResumeInitialDataLateState(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	sendRange(t, s, 0, 0, 3)
	ackRanges(t, s, 100*ms, 0, 1)
	sendRange(t, s, 100*ms, 4, 5)
	if !s.StartCarefulResume(100*ms, testSaved) {
		t.Fatal("refused")
	}
	if s.resume.initialData != 6*seg {
		t.Fatalf("initial data %d, want %d", s.resume.initialData, 6*seg)
	}
	ackRanges(t, s, 200*ms, 0, 4)
	if s.resume.ready {
		t.Fatal("ready before all the initial data was acknowledged")
	}
	ackRanges(t, s, 210*ms, 0, 5)
	if !s.resume.ready {
		t.Fatal("not ready with the initial data acknowledged")
	}
	wantPhase(t, s, ResumeReconnaissance)
}

// When the path is confirmed after the normal window already grew to
// jump_cwnd, the jump has nothing to add: Careful Resume enters the Normal
// Phase at once, says why, and leaves the window to normal congestion
// control.
func TestResumeWindowAlreadyAboveJump(t *testing.T) {
	saved := ResumeState{SavedCwnd: 28 * seg, SavedRTT: 100 * ms} // jump_cwnd 14 packets
	s := confirmed(t, testConfig(NewReno))
	if !s.StartCarefulResume(0, saved) {
		t.Fatal("refused")
	}
	sendRange(t, s, 0, 0, 9)
	ackRanges(t, s, 100*ms, 0, 4)
	// Half the initial data acknowledged: the window (15 packets) passed
	// the jump, but the path is not confirmed yet.
	wantCwnd(t, s, 15*seg)
	wantPhase(t, s, ResumeReconnaissance)
	ackRanges(t, s, 110*ms, 0, 9)
	wantPhase(t, s, ResumeNormal)
	wantCwnd(t, s, 20*seg)
	wantStats(t, s, 1, 0, 0, 0, 1)
	if !s.ResumeWindowSufficed() {
		t.Fatal("ResumeWindowSufficed false")
	}
	if !s.InSlowStart() {
		t.Fatal("normal slow start did not go on")
	}
}

// drivenController stands for a controller that resumes its own model
// (BBR): it records what the wrapper tells it and counts the events it
// receives.
type drivenController struct {
	*newReno
	calls             []string
	probeRate         uint64
	savedRate         uint64
	retreatCwnd       int
	acks, congestions int
}

func (d *drivenController) OnAck(now time.Duration, ev *AckEvent) {
	d.acks++
	d.newReno.OnAck(now, ev)
}

func (d *drivenController) OnCongestionEvent(now time.Duration, ev *CongestionEvent) {
	d.congestions++
	d.newReno.OnCongestionEvent(now, ev)
}

func (d *drivenController) resumeProbe(_ time.Duration, rate, saved uint64) {
	d.calls = append(d.calls, "probe")
	d.probeRate, d.savedRate = rate, saved
}

// resumeCongested takes every signal for congestion, as a window-based
// controller does.
func (d *drivenController) resumeCongested(*CongestionEvent) bool { return true }
func (d *drivenController) resumeRetreat(_ time.Duration, cwnd int) {
	d.calls = append(d.calls, "retreat")
	d.retreatCwnd = cwnd
}
func (d *drivenController) resumeValidating(time.Duration) {
	d.calls = append(d.calls, "validating")
}
func (d *drivenController) resumeDone(time.Duration) { d.calls = append(d.calls, "done") }

// A driven controller probes at half the saved bandwidth, sees every ACK
// and congestion signal, and is told of Safe Retreat and of the end.
func TestResumeDrivenController(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	d := &drivenController{newReno: newNewReno(&s.cfg)}
	s.cc = d
	if !s.StartCarefulResume(0, testSaved) {
		t.Fatal("refused")
	}
	sendRange(t, s, 0, 0, 9)
	ackRanges(t, s, 100*ms, 0, 9)
	sendRange(t, s, 100*ms, 10, 29)
	wantPhase(t, s, ResumeUnvalidated)
	// Half of 600 packets per 100 ms.
	if d.probeRate != 3_600_000 || d.savedRate != 7_200_000 {
		t.Fatalf("probe rate %d B/s and saved rate %d, want 3600000 and 7200000", d.probeRate, d.savedRate)
	}
	if s.PacingRate() != d.PacingRate(&s.rtt) || s.CongestionWindow() != d.Window() {
		t.Fatal("the wrapper overrode a driven controller's window or pacing")
	}
	// Packet 12 is lost; the last packet sent before Safe Retreat is 29.
	res := ackRanges(t, s, 200*ms, 13, 20, 10, 11)
	if len(res.Lost) != 1 {
		t.Fatalf("lost %v", numbers(res.Lost))
	}
	wantPhase(t, s, ResumeSafeRetreat)
	ackRanges(t, s, 201*ms, 13, 29, 10, 11)
	wantPhase(t, s, ResumeNormal)
	if got := len(d.calls); got != 3 || d.calls[0] != "probe" || d.calls[1] != "retreat" || d.calls[2] != "done" {
		t.Fatalf("calls %v, want [probe retreat done]", d.calls)
	}
	if d.acks != 3 || d.congestions != 1 {
		t.Fatalf("%d ACKs and %d congestion events forwarded, want 3 and 1", d.acks, d.congestions)
	}
}

// SavablePathState is the delivery rate times the minimum RTT, once that
// is at least four initial windows.
func TestSavablePathState(t *testing.T) {
	s := confirmed(t, testConfig(CUBIC))
	if _, ok := s.SavablePathState(); ok {
		t.Fatal("a state before any measurement")
	}
	sendRange(t, s, 0, 0, 9)
	ackRanges(t, s, 100*ms, 0, 9)
	if st, ok := s.SavablePathState(); ok {
		t.Fatalf("%+v saved from an initial window", st)
	}
	sendRange(t, s, 100*ms, 10, 109)
	ackRanges(t, s, 200*ms, 0, 109)
	// 100 packets delivered in 100 ms.
	st, ok := s.SavablePathState()
	if want := (ResumeState{SavedCwnd: 100 * seg, SavedRTT: 100 * ms}); !ok || st != want {
		t.Fatalf("%+v (%v), want %+v", st, ok, want)
	}
}

// The path record keeps the largest rate and window of the last one or two
// periods of ten smoothed RTTs; without a rate sample, the window in use
// counts, halved in slow start.
func TestPathRecord(t *testing.T) {
	rtt := newRTTStats(100*ms, 0)
	rtt.update(0, 100*ms, 0, true)
	var r pathRecord
	onAck := func(at time.Duration, rs RateSample, prior int64, cwnd int, slowStart bool) {
		r.onAck(at, &AckEvent{RTT: &rtt, PriorInFlight: prior, Rate: rs}, cwnd, slowStart, seg)
	}
	onAck(0, RateSample{HasData: true}, 100*seg, 100*seg, true)
	if got := r.bytesPerRTT(100 * ms); got != 50*seg {
		t.Fatalf("%d bytes per RTT from a slow start window, want %d", got, 50*seg)
	}
	onAck(10*ms, RateSample{HasData: true}, 150*seg, 151*seg, false)
	onAck(20*ms, RateSample{HasData: true}, 10*seg, 300*seg, false) // not in use
	onAck(30*ms, RateSample{HasData: true, IsAppLimited: true}, 300*seg, 300*seg, false)
	if got := r.bytesPerRTT(100 * ms); got != 151*seg {
		t.Fatalf("%d bytes per RTT from the window in use, want %d", got, 151*seg)
	}
	onAck(40*ms, RateSample{HasData: true, Valid: true, DeliveryRate: 1_000_000}, 0, 0, false)
	onAck(50*ms, RateSample{HasData: true, Valid: true, DeliveryRate: 2_000_000, IsAppLimited: true}, 0, 0, false)
	onAck(60*ms, RateSample{HasData: true, Valid: true, DeliveryRate: 1_500_000, IsAppLimited: true}, 0, 0, false)
	if got := r.bytesPerRTT(100 * ms); got != 200_000 {
		t.Fatalf("%d bytes per RTT, want the largest rate's 200000", got)
	}
	// A second period keeps the first's maximum; a third forgets it.
	onAck(1000*ms, RateSample{HasData: true, Valid: true, DeliveryRate: 500_000}, 0, 0, false)
	if got := r.bytesPerRTT(100 * ms); got != 200_000 {
		t.Fatalf("%d bytes per RTT in the next period, want 200000", got)
	}
	onAck(2000*ms, RateSample{HasData: true, Valid: true, DeliveryRate: 400_000}, 0, 0, false)
	if got := r.bytesPerRTT(100 * ms); got != 50_000 {
		t.Fatalf("%d bytes per RTT two periods on, want 50000", got)
	}
}
