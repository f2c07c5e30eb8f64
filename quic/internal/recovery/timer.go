package recovery

import "time"

// Deadline is when the loss detection timer fires, if it is armed (RFC 9002
// appendix A.8). The core calls OnTimeout at that time. The deadline can
// change after any call into the Sender.
func (s *Sender) Deadline() (time.Duration, bool) { return s.timer, s.timerArmed }

// setTimer is appendix A.8's SetLossDetectionTimer.
func (s *Sender) setTimer(now time.Duration) {
	if t, _, ok := s.earliestLossTime(); ok {
		s.timer, s.timerArmed = t, true
		return
	}
	if s.ampLimited {
		// A server at its anti-amplification limit could not send a
		// probe; the timer waits for the limit to lift.
		s.timerArmed = false
		return
	}
	if !s.ackElicitingInFlight() && s.peerCompletedAddressValidation() {
		s.timerArmed = false
		return
	}
	t, _, ok := s.ptoTimeAndSpace(now)
	s.timer, s.timerArmed = t, ok
}

// earliestLossTime is appendix A.8's GetLossTimeAndSpace.
func (s *Sender) earliestLossTime() (time.Duration, Space, bool) {
	var t time.Duration
	var space Space
	found := false
	for i := range s.spaces {
		sp := &s.spaces[i]
		if sp.hasLossTime && (!found || sp.lossTime < t) {
			t, space, found = sp.lossTime, Space(i), true
		}
	}
	return t, space, found
}

func (s *Sender) ackElicitingInFlight() bool {
	for i := range s.spaces {
		if s.spaces[i].ackElicitingInFlight > 0 {
			return true
		}
	}
	return false
}

// peerCompletedAddressValidation is appendix A.6's
// PeerCompletedAddressValidation: a server assumes it; a client knows it
// once the handshake is confirmed or a Handshake packet was acknowledged.
func (s *Sender) peerCompletedAddressValidation() bool {
	return s.cfg.IsServer || s.handshakeConfirmed || s.handshakeAcked
}

// ptoPeriod is the PTO period with backoff (section 6.2.1):
// (smoothed_rtt + max(4*rttvar, kGranularity) [+ max_ack_delay]) *
// 2^pto_count, floored at MinPTO before backoff and capped at MaxPTO.
func (s *Sender) ptoPeriod(withAckDelay bool) time.Duration {
	d := s.rtt.ptoBase(s.cfg.Granularity)
	if withAckDelay {
		d += s.rtt.maxAckDelay
	}
	d = max(d, s.cfg.MinPTO)
	for i := 0; i < s.ptoCount && d < s.cfg.MaxPTO; i++ {
		d *= 2
	}
	return min(d, s.cfg.MaxPTO)
}

// ptoTimeAndSpace is appendix A.8's GetPtoTimeAndSpace.
func (s *Sender) ptoTimeAndSpace(now time.Duration) (time.Duration, Space, bool) {
	if !s.ackElicitingInFlight() {
		// Anti-deadlock (section 6.2.2.1): the client arms the PTO from
		// now so that the server can send more.
		return now + s.ptoPeriod(false), s.antiDeadlockSpace(), true
	}
	var best time.Duration
	var space Space
	found := false
	for i := range s.spaces {
		sp := &s.spaces[i]
		if sp.ackElicitingInFlight == 0 {
			continue
		}
		withDelay := false
		if Space(i) == SpaceApplication {
			// Section 6.2.1: no PTO for application data before the
			// handshake is confirmed; then include max_ack_delay.
			if !s.handshakeConfirmed {
				break
			}
			withDelay = true
		}
		t := sp.lastAckElicitingTime + s.ptoPeriod(withDelay)
		if !found || t < best {
			best, space, found = t, Space(i), true
		}
	}
	return best, space, found
}

func (s *Sender) antiDeadlockSpace() Space {
	if s.hasHandshakeKeys && !s.spaces[SpaceHandshake].discarded {
		return SpaceHandshake
	}
	return SpaceInitial
}

// OnTimeout is appendix A.9's OnLossDetectionTimeout: a time-threshold
// loss detection, or a PTO that asks for probes (Result.Probe). A call
// before Deadline does nothing, so a spurious wake-up is harmless.
func (s *Sender) OnTimeout(now time.Duration) *Result {
	s.res.reset()
	if !s.timerArmed || now < s.timer {
		return &s.res
	}
	if _, space, ok := s.earliestLossTime(); ok {
		s.rate.begin()
		s.detectAndSignal(now, space, &s.spaces[space])
		s.setTimer(now)
		return &s.res
	}
	probe := Probe{Count: s.cfg.PTOProbes}
	if !s.ackElicitingInFlight() {
		// Anti-deadlock: one padded Initial or one Handshake packet.
		probe = Probe{Space: s.antiDeadlockSpace(), Count: 1, AntiDeadlock: true}
	} else {
		_, probe.Space, _ = s.ptoTimeAndSpace(now)
	}
	s.spaces[probe.Space].probes = probe.Count
	s.res.Probe = probe
	s.ptoCount++
	s.stats.PTOs++
	s.setTimer(now)
	return &s.res
}
