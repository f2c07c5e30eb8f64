package recovery

import (
	"fmt"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// CoverPacket tells the loss detector that a repair symbol covering packet
// pn of space is in flight and, if the packet is lost, should let the peer
// recover it by time until (typically the repair's send time plus the
// smoothed RTT and the peer's ack delay). Until then the packet is not
// declared lost, whatever the thresholds say: retransmitting what the
// repair will rebuild wastes the path. The hold never lasts more than
// Config.FECMaxHold (or the smoothed RTT) past the time threshold. Covering a packet already
// acknowledged, lost or recovered does nothing; several repairs keep the
// latest deadline.
func (s *Sender) CoverPacket(space Space, pn uint64, until time.Duration) error {
	sp, err := s.space(space)
	if err != nil {
		return err
	}
	if !sp.hasSent || pn >= sp.nextPN {
		return fmt.Errorf("%w: cannot cover packet %d, never sent", ErrInvalidPacket, pn)
	}
	rec := sp.ring.at(pn)
	if rec == nil || rec.state != stateOutstanding {
		return nil
	}
	if !rec.has(flagCovered) || until > rec.deadline {
		rec.deadline = until
	}
	rec.flags |= flagCovered
	return nil
}

// OnRecovered processes the peer's report that its FEC decoder rebuilt the
// packets in ranges (descending, like ACK ranges) of space. Their frames
// are delivered (Result.Recovered): they are never retransmitted. They
// leave bytes in flight; for congestion control they are a loss under
// FECSignal and a delivery under FECHide. Packets already acknowledged are
// ignored; packets already declared lost are reported too, so that a
// queued retransmission can be dropped.
func (s *Sender) OnRecovered(now time.Duration, space Space, ranges []wire.AckRange) (*Result, error) {
	sp, err := s.space(space)
	if err != nil {
		return nil, err
	}
	if err := validateRanges(sp, ranges); err != nil {
		return nil, err
	}
	s.res.reset()
	s.rate.begin()
	prior := s.bytesInFlight
	s.delivered = s.delivered[:0]
	var newest time.Duration
	for i := len(ranges) - 1; i >= 0; i-- {
		newest = max(newest, s.recoverRange(now, sp, space, ranges[i]))
	}
	// The recovered packets may have been what armed the loss timer;
	// detection recomputes it (and declares what the thresholds condemn).
	s.detectAndSignal(now, space, sp)
	if len(s.delivered) > 0 {
		s.signalRecovered(now, prior, newest)
	}
	s.setTimer(now)
	return &s.res, nil
}

// recoverRange marks the packets of r recovered and returns the newest send
// time among the in-flight ones.
func (s *Sender) recoverRange(now time.Duration, sp *spaceState, space Space, r wire.AckRange) time.Duration {
	var newest time.Duration
	if sp.ring.len() == 0 || r.Largest < sp.ring.first {
		return newest
	}
	hi := min(r.Largest, sp.ring.end()-1)
	for pn := max(r.Smallest, sp.ring.first); pn <= hi; pn++ {
		rec := sp.ring.at(pn)
		switch rec.state {
		case stateOutstanding:
			rec.state = stateRecovered
			if rec.has(flagInFlight) {
				s.removeFromFlight(sp, rec)
				// Rebuilt data reached the peer: it counts in the
				// delivery rate under either policy. Under FECSignal it
				// also counts as lost, for BBR's loss rate.
				s.rate.onDelivered(rec, now)
				if s.cfg.FECPolicy != FECHide {
					s.rate.onLost(int64(rec.bytes))
				}
				newest = max(newest, rec.timeSent)
			}
			s.delivered = append(s.delivered, rec.info(space))
		case stateLost:
			rec.state = stateRecovered
			s.stats.RecoveredAfterLoss++
			s.undeferLoss(space, pn)
		default:
			continue
		}
		s.res.Recovered = append(s.res.Recovered, rec.info(space))
		s.stats.PacketsRecovered++
	}
	return newest
}

// signalRecovered applies the FEC policy to the newly recovered packets.
func (s *Sender) signalRecovered(now time.Duration, prior int64, newest time.Duration) {
	if s.cfg.FECPolicy == FECHide {
		s.informController(now, s.delivered, prior, false)
		return
	}
	var bytes int64
	for i := range s.delivered {
		if s.delivered[i].InFlight {
			bytes += int64(s.delivered[i].Bytes)
		}
	}
	if bytes == 0 {
		return
	}
	s.signal(now, CongestionEvent{
		Cause:           CauseFECRecovered,
		LostBytes:       bytes,
		LargestSentTime: newest,
		PriorInFlight:   prior,
		BytesInFlight:   s.bytesInFlight,
	})
	if _, ok := s.cc.(rebuiltDeliveredController); ok {
		s.informController(now, s.delivered, prior, false)
	}
}
