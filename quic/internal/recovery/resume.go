package recovery

import "time"

// ResumeState is Careful Resume's saved path state (RFC 9959 section 3.1):
// what an earlier connection measured on the path, which a later one may
// resume from.
type ResumeState struct {
	// SavedCwnd is saved_cwnd: the bytes the path delivered per round
	// trip (the utilised capacity), not a window that overshot in slow
	// start.
	SavedCwnd int64
	// SavedRTT is saved_rtt: the minimum RTT when it was measured.
	SavedRTT time.Duration
}

// ResumePhase is a phase of Careful Resume (RFC 9959 section 3), named as
// in RFC 9959 and in its qlog events. The zero value means Careful Resume
// is not in use on the connection.
type ResumePhase uint8

const (
	// ResumeOff: Careful Resume is not in use.
	ResumeOff ResumePhase = iota
	// ResumeReconnaissance (section 3.2): normal congestion control from
	// the initial window while the path is confirmed.
	ResumeReconnaissance
	// ResumeUnvalidated (section 3.3): the window jumped to jump_cwnd and
	// packets are paced at jump_cwnd per current RTT.
	ResumeUnvalidated
	// ResumeValidating (section 3.4): the window is the flight size and
	// grows as normal until the last unvalidated packet is acknowledged.
	ResumeValidating
	// ResumeSafeRetreat (section 3.5): congestion while unvalidated; the
	// window is PipeSize/2 until the unvalidated packets are drained.
	ResumeSafeRetreat
	// ResumeNormal (section 3.7): Careful Resume is over; the controller
	// runs as usual.
	ResumeNormal
)

// String is the phase's name in Careful Resume's qlog events.
func (p ResumePhase) String() string {
	switch p {
	case ResumeOff:
		return "off"
	case ResumeReconnaissance:
		return "reconnaissance"
	case ResumeUnvalidated:
		return "unvalidated"
	case ResumeValidating:
		return "validating"
	case ResumeSafeRetreat:
		return "safe_retreat"
	case ResumeNormal:
		return "normal"
	}
	return "invalid"
}

// StartCarefulResume makes the Sender use st as saved state: it enters (or,
// with a newer state, stays in) the Reconnaissance Phase. A server calls it
// when a verified saved state arrives, which may be after its first packets
// were sent. It is ignored, and returns false, when Careful Resume is
// disabled, once the connection left its first slow start, saw congestion
// or left Reconnaissance, when the controller cannot be resumed, and when st
// is unusable: not positive, a jump no larger than the window already
// allows, or an RTT already measured that does not confirm the path
// (section 4.2.1).
func (s *Sender) StartCarefulResume(now time.Duration, st ResumeState) bool {
	if s.cfg.CarefulResume.Disable || st.SavedCwnd <= 0 || st.SavedRTT <= 0 {
		return false
	}
	if s.resume != nil {
		if s.resume.phase != ResumeReconnaissance || !s.resume.usable(st) || !s.resume.pathConfirmed(&s.rtt, st) {
			return false
		}
		s.resume.saved = st
		s.resume.checkReady(now, s.rate.delivered, s.bytesInFlight)
		return true
	}
	if s.stats.CongestionSignals > 0 || !s.cc.InSlowStart() || s.cc.State().Reductions > 0 {
		return false
	}
	cr := newCarefulResume(s.cc, &s.cfg, &s.rtt, &s.stats)
	if cr == nil || !cr.usable(st) || !cr.pathConfirmed(&s.rtt, st) {
		return false
	}
	cr.saved = st
	// The initial data: what was sent before the first RTT sample, or,
	// with a sample already taken, before the state arrived
	// (carefulResume.initialData).
	cr.initialData = s.bytesInFlight
	if s.rtt.HasSample() {
		cr.initialData += s.rate.delivered
	}
	s.resume, s.cc = cr, cr
	cr.enter(ResumeReconnaissance)
	cr.checkReady(now, s.rate.delivered, s.bytesInFlight)
	return true
}

// ResumePhase is the current phase of Careful Resume; ResumeOff when it
// was never started.
func (s *Sender) ResumePhase() ResumePhase {
	if s.resume == nil {
		return ResumeOff
	}
	return s.resume.phase
}

// ResumeWindowSufficed reports whether Careful Resume ended in the
// Reconnaissance Phase because the window normal congestion control
// allowed had already reached jump_cwnd once the path was confirmed
// (RFC 9959 section 3.2; qlog's congestion_window_limited): the jump had
// nothing to add.
func (s *Sender) ResumeWindowSufficed() bool {
	return s.resume != nil && s.resume.windowSufficed
}

// SavablePathState is the state worth saving now for a later connection to
// the same peer (RFC 9959 section 3.1 and 4.1): the bytes per round trip
// the path carried, from the largest recent delivery rate times the
// minimum RTT (or, without a rate sample, the window while it was in use
// and the sender not application limited, halved in slow start where it
// may have overshot), and the minimum RTT. ok is false until there is such
// a measurement, and while it is below four initial windows, where RFC
// 9959 section 3.1 finds resuming not worth its cost.
func (s *Sender) SavablePathState() (st ResumeState, ok bool) {
	if !s.rtt.HasSample() {
		return ResumeState{}, false
	}
	minRTT := s.rtt.MinRTT()
	perRTT := s.path.bytesPerRTT(minRTT)
	if perRTT < 4*int64(s.cfg.initialWindow(s.mds)) {
		return ResumeState{}, false
	}
	return ResumeState{SavedCwnd: perRTT, SavedRTT: minRTT}, true
}
