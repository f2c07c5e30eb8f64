package recovery

import (
	"fmt"
	"time"
)

// SetHandshakeKeys tells the Sender that Handshake keys are installed: a
// client's anti-deadlock probe then goes in a Handshake packet (RFC 9002
// section 6.2.2.1).
func (s *Sender) SetHandshakeKeys(now time.Duration) {
	s.hasHandshakeKeys = true
	s.setTimer(now)
}

// ConfirmHandshake tells the Sender the handshake is confirmed (RFC 9001
// section 4.1.2): the application space gets a PTO, and ack delays are
// capped at max_ack_delay.
func (s *Sender) ConfirmHandshake(now time.Duration) {
	s.handshakeConfirmed = true
	s.setTimer(now)
}

// SetAmplificationLimited tells a server whether it is blocked by the
// anti-amplification limit (RFC 9000 section 8.1); while it is, no PTO is
// armed (RFC 9002 section 6.2.2.1).
func (s *Sender) SetAmplificationLimited(now time.Duration, limited bool) {
	s.ampLimited = limited
	s.setTimer(now)
}

// SetPeerMaxAckDelay installs the peer's max_ack_delay transport parameter
// (RFC 9000 section 18.2).
func (s *Sender) SetPeerMaxAckDelay(now, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%w: max_ack_delay %v is negative", ErrInvalidConfig, d)
	}
	s.rtt.maxAckDelay = d
	s.setTimer(now)
	return nil
}

// DiscardSpace drops the Initial or Handshake space with its keys (RFC 9002
// section 6.4 and appendix A.11): its packets leave bytes in flight without
// being acknowledged or lost, and are reported in Result.Discarded. Later
// use of the space is an error.
func (s *Sender) DiscardSpace(now time.Duration, space Space) (*Result, error) {
	if space == SpaceApplication {
		return nil, fmt.Errorf("%w: the application space is never discarded; use DiscardPackets for 0-RTT", ErrInvalidSpace)
	}
	sp, err := s.space(space)
	if err != nil {
		return nil, err
	}
	s.res.reset()
	s.discardOutstanding(sp, space, sp.nextPN)
	*sp = spaceState{discarded: true}
	s.ptoCount = 0
	s.setTimer(now)
	return &s.res, nil
}

// DiscardPackets drops the outstanding packets of space numbered below
// 'below', for 0-RTT packets when the server rejects 0-RTT (RFC 9002
// section 6.4): they leave bytes in flight and are reported in
// Result.Discarded, so the core can send their data again in 1-RTT.
func (s *Sender) DiscardPackets(now time.Duration, space Space, below uint64) (*Result, error) {
	sp, err := s.space(space)
	if err != nil {
		return nil, err
	}
	s.res.reset()
	s.discardOutstanding(sp, space, below)
	s.setTimer(now)
	return &s.res, nil
}

func (s *Sender) discardOutstanding(sp *spaceState, space Space, below uint64) {
	end := min(below, sp.ring.end())
	for pn := sp.ring.first; sp.ring.len() > 0 && pn < end; pn++ {
		rec := sp.ring.at(pn)
		switch rec.state {
		case stateOutstanding:
			if rec.has(flagInFlight) {
				s.removeFromFlight(sp, rec)
			}
			s.res.Discarded = append(s.res.Discarded, rec.info(space))
		case stateLost:
		default:
			continue
		}
		rec.state = stateDiscarded
	}
	keep := sp.holes[:0]
	for _, pn := range sp.holes {
		if rec := sp.ring.at(pn); rec != nil && (rec.state == stateOutstanding || rec.state == stateLost) {
			keep = append(keep, pn)
		}
	}
	sp.holes = keep
	sp.compact()
	if sp.ackElicitingInFlight == 0 {
		sp.hasLossTime = false
	}
}
