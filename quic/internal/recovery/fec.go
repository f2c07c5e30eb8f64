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
// leave bytes in flight; for congestion control they are a loss or a
// delivery as RecoveredIsCongestion says (always a loss under FECSignal,
// never under FECHide, by the path's state under FECAuto). Packets already
// acknowledged are ignored; packets already declared lost are reported
// too, so that a queued retransmission can be dropped.
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
	congestion := s.RecoveredIsCongestion(now)
	prior := s.bytesInFlight
	s.delivered = s.delivered[:0]
	var sig recoveredSignal
	for i := len(ranges) - 1; i >= 0; i-- {
		s.recoverRange(now, sp, space, ranges[i], congestion, &sig)
	}
	// The recovered packets may have been what armed the loss timer;
	// detection recomputes it (and declares what the thresholds condemn).
	s.detectAndSignal(now, space, sp)
	s.signalRecovered(now, prior, congestion, &sig)
	s.setTimer(now)
	return &s.res, nil
}

// recoveredSignal sums what a report's rebuilt packets weigh as
// congestion: the in-flight bytes rebuilt, and those of sources declared
// lost whose signal was still held (fec_defer.go).
type recoveredSignal struct {
	bytes  int64
	newest time.Duration
}

func (r *recoveredSignal) add(bytes int64, timeSent time.Duration) {
	r.bytes += bytes
	r.newest = max(r.newest, timeSent)
}

// recoverRange marks the packets of r recovered, counting each in-flight
// one as lost or delivered for the rate sampler as congestion says.
func (s *Sender) recoverRange(now time.Duration, sp *spaceState, space Space, r wire.AckRange, congestion bool, sig *recoveredSignal) {
	if sp.ring.len() == 0 || r.Largest < sp.ring.first {
		return
	}
	hi := min(r.Largest, sp.ring.end()-1)
	for pn := max(r.Smallest, sp.ring.first); pn <= hi; pn++ {
		rec := sp.ring.at(pn)
		switch rec.state {
		case stateOutstanding:
			rec.state = stateRecovered
			if rec.has(flagInFlight) {
				s.removeFromFlight(sp, rec)
				s.countRecovered(now, rec, congestion)
				sig.add(int64(rec.bytes), rec.timeSent)
			}
			s.delivered = append(s.delivered, rec.info(space))
		case stateLost:
			rec.state = stateRecovered
			s.stats.RecoveredAfterLoss++
			if d, held := s.undeferLoss(space, pn); held && congestion {
				sig.add(d.bytes, d.timeSent)
			} else if held {
				s.stats.LossSignalsAvoided++
			}
		default:
			continue
		}
		s.res.Recovered = append(s.res.Recovered, rec.info(space))
		s.stats.PacketsRecovered++
	}
}

// countRecovered feeds a rebuilt in-flight packet to the rate sampler and
// the counters.
func (s *Sender) countRecovered(now time.Duration, rec *sentPacket, congestion bool) {
	// Rebuilt data reached the peer: it counts in the delivery rate
	// whatever the policy. Where the policy counts it as congestion it
	// counts as lost too, for BBR's loss rate.
	s.rate.onDelivered(rec, now)
	if congestion {
		s.rate.onLost(int64(rec.bytes))
		s.stats.RecoveredAsCongestion++
		return
	}
	s.stats.RecoveredAsDelivered++
}

// signalRecovered applies the FEC policy's answer to the report: a
// congestion event for the rebuilt bytes, or their delivery to the
// controller.
func (s *Sender) signalRecovered(now time.Duration, prior int64, congestion bool, sig *recoveredSignal) {
	if !congestion {
		if len(s.delivered) > 0 {
			s.informController(now, s.delivered, prior, false)
		}
		return
	}
	if sig.bytes == 0 {
		return
	}
	s.signal(now, CongestionEvent{
		Cause:           CauseFECRecovered,
		LostBytes:       sig.bytes,
		LargestSentTime: sig.newest,
		PriorInFlight:   prior,
		BytesInFlight:   s.bytesInFlight,
	})
	if _, ok := s.cc.(rebuiltDeliveredController); ok && len(s.delivered) > 0 {
		s.informController(now, s.delivered, prior, false)
	}
}
