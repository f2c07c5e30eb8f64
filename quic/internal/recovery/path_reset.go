package recovery

import "time"

// ResetPath starts the congestion controller and the RTT estimator again
// from their initial values, as for a new connection, when the connection
// moved to a path whose capacity and delay nothing known tells (RFC 9000
// section 9.4; RFC 9002 appendices A.3 and B.3). The peer's max_ack_delay
// and the datagram size stay: they belong to the connection, not the path.
// Packets still in flight stay tracked for loss detection, but the new
// controller never learns of them: what was sent on the old path does not
// count for the new one (RFC 9000 section 9.4). A saved path state of
// Careful Resume no longer applies either.
func (s *Sender) ResetPath(now time.Duration) error {
	cfg := s.cfg
	cfg.MaxDatagramSize = s.mds
	s.rtt = newRTTStats(cfg.InitialRTT, s.rtt.maxAckDelay)
	s.resume = nil
	s.pacer = Pacer{}
	if cfg.Custom == nil {
		s.cc = newController(&cfg)
	} else {
		custom, err := newCustomController(&cfg)
		if err != nil {
			return err
		}
		s.cc, s.custom = custom, custom
	}
	s.ptoCount = 0
	s.setTimer(now)
	return nil
}

// ProbeNow asks at now for the probes of a probe timeout in the
// application space (Result.Probe), and forgets the timeout's backoff: the
// connection just moved to a new peer address, what it had in flight went
// to the old one and is likely lost, and waiting for a timeout that backed
// off while the old address was silent would stall the new path (RFC 9002
// section 6.2.4 lets probes go at any time). Nothing is asked without
// ack-eliciting packets in flight.
func (s *Sender) ProbeNow(now time.Duration) *Result {
	s.res.reset()
	if !s.ackElicitingInFlight() || s.spaces[SpaceApplication].discarded {
		return &s.res
	}
	s.spaces[SpaceApplication].probes = s.cfg.PTOProbes
	s.res.Probe = Probe{Space: SpaceApplication, Count: s.cfg.PTOProbes}
	s.ptoCount = 0
	s.setTimer(now)
	return &s.res
}
