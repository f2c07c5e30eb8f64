package recovery

import (
	"fmt"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// Ack is an ACK frame as the Sender needs it.
type Ack struct {
	// Ranges are in descending order with gaps between them, as
	// wire.AckFrame holds them: Ranges[0].Largest is the Largest
	// Acknowledged.
	Ranges []wire.AckRange
	// Delay is the ACK Delay field decoded with the peer's
	// ack_delay_exponent (wire.DecodeAckDelay).
	Delay time.Duration
	// ECN holds the counts of an ACK_ECN frame, or nil. The core
	// validates ECN (RFC 9000 section 13.4.2) and passes nil for a path
	// that failed validation.
	ECN *wire.ECNCounts
	// ECNCheck, when set, validates ECN against the packets the frame
	// newly acknowledges before a CE increase counts as congestion.
	ECNCheck ECNValidator
}

// ECNValidator checks the ECN counts of an ACK frame (RFC 9000 section
// 13.4.2.1). Only the core knows which packets it sent ECN-capable, and
// the check needs the packets newly acknowledged, which only the Sender
// knows until OnAck returns: so OnAck calls back.
type ECNValidator interface {
	// ValidateECN is called with the time of OnAck, the frame's counts
	// (nil for an ACK without them) and the packets it newly
	// acknowledges, before they are handed back in the Result. It
	// reports whether the counts may be acted on.
	ValidateECN(now time.Duration, space Space, counts *wire.ECNCounts, acked []PacketInfo) bool
}

// OnAck processes an ACK frame received in space (RFC 9002 appendix A.7):
// it marks packets acknowledged, takes an RTT sample, reacts to ECN-CE,
// detects losses, informs the controller and re-arms the timer. An
// acknowledgement of a packet never sent gives ErrAckOfUnsentPacket, which
// the core turns into a PROTOCOL_VIOLATION.
func (s *Sender) OnAck(now time.Duration, space Space, ack *Ack) (*Result, error) {
	sp, err := s.space(space)
	if err != nil {
		return nil, err
	}
	if err := validateRanges(sp, ack.Ranges); err != nil {
		return nil, err
	}
	s.res.reset()
	s.rate.begin()
	prior := s.bytesInFlight
	if space == SpaceHandshake {
		s.handshakeAcked = true
	}
	s.ackHoles(now, sp, space, ack.Ranges)
	s.ackNew(now, sp, space, ack.Ranges)
	if largest := ack.Ranges[0].Largest; !sp.hasLargestAcked || largest > sp.largestAcked {
		sp.largestAcked, sp.hasLargestAcked = largest, true
	}
	if len(s.res.Acked) == 0 {
		// Nothing newly acknowledged: no sample, no loss detection.
		sp.compact()
		s.setTimer(now)
		return &s.res, nil
	}
	hasSample := s.updateRTT(now, space, ack)
	ecn := ack.ECN
	if ack.ECNCheck != nil && !ack.ECNCheck.ValidateECN(now, space, ecn, s.res.Acked) {
		ecn = nil
	}
	s.processECN(now, sp, ecn, prior)
	s.detectAndSignal(now, space, sp)
	s.informController(now, s.res.Acked, prior, hasSample)
	if s.peerCompletedAddressValidation() {
		s.ptoCount = 0
	}
	s.setTimer(now)
	return &s.res, nil
}

// validateRanges checks the shape of the ranges and that they cover no
// packet number that was never sent.
func validateRanges(sp *spaceState, ranges []wire.AckRange) error {
	if len(ranges) == 0 {
		return fmt.Errorf("%w: no range", ErrInvalidAck)
	}
	for i, r := range ranges {
		if r.Smallest > r.Largest {
			return fmt.Errorf("%w: range %d is [%d, %d]", ErrInvalidAck, i, r.Smallest, r.Largest)
		}
		if i > 0 && r.Largest+1 >= ranges[i-1].Smallest {
			return fmt.Errorf("%w: range %d is not below range %d with a gap", ErrInvalidAck, i, i-1)
		}
	}
	if !sp.hasSent || ranges[0].Largest >= sp.nextPN {
		return fmt.Errorf("%w: %d", ErrAckOfUnsentPacket, ranges[0].Largest)
	}
	for _, k := range sp.skipped {
		if overlaps(ranges, k) {
			return fmt.Errorf("%w: skipped number in [%d, %d]", ErrAckOfUnsentPacket, k.lo, k.hi)
		}
	}
	return nil
}

// overlaps reports whether any of the descending ranges meets k.
func overlaps(ranges []wire.AckRange, k pnRange) bool {
	// Binary search for the first range whose Smallest <= k.hi.
	lo, hi := 0, len(ranges)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if ranges[mid].Smallest > k.hi {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo < len(ranges) && ranges[lo].Largest >= k.lo
}

// ackHoles merges the ranges with the holes below the previous largest
// acknowledged: only these can be newly acknowledged there.
func (s *Sender) ackHoles(now time.Duration, sp *spaceState, space Space, ranges []wire.AckRange) {
	j := len(ranges) - 1
	keep := sp.holes[:0]
	for _, pn := range sp.holes {
		for j >= 0 && ranges[j].Largest < pn {
			j--
		}
		rec := sp.ring.at(pn)
		if rec == nil {
			continue
		}
		if j >= 0 && ranges[j].Smallest <= pn {
			switch rec.state {
			case stateOutstanding:
				s.onAcked(now, sp, space, rec)
				continue
			case stateLost:
				s.onLateAcked(rec, space)
				continue
			}
		}
		if rec.state == stateOutstanding || rec.state == stateLost {
			keep = append(keep, pn)
		}
	}
	sp.holes = keep
}

// ackNew walks the packets above the previous largest acknowledged up to
// the new one: each is acknowledged or becomes a hole.
func (s *Sender) ackNew(now time.Duration, sp *spaceState, space Space, ranges []wire.AckRange) {
	if sp.ring.len() == 0 {
		return
	}
	lo := sp.ring.first
	if sp.hasLargestAcked {
		lo = max(lo, sp.largestAcked+1)
	}
	hi := min(ranges[0].Largest, sp.ring.end()-1)
	j := len(ranges) - 1
	for pn := lo; pn <= hi; pn++ {
		rec := sp.ring.at(pn)
		if rec.state != stateOutstanding {
			continue
		}
		for j >= 0 && ranges[j].Largest < pn {
			j--
		}
		if j >= 0 && ranges[j].Smallest <= pn {
			s.onAcked(now, sp, space, rec)
		} else {
			sp.holes = append(sp.holes, pn)
		}
	}
}

func (s *Sender) onAcked(now time.Duration, sp *spaceState, space Space, rec *sentPacket) {
	rec.state = stateAcked
	if rec.has(flagInFlight) {
		s.removeFromFlight(sp, rec)
		s.rate.onDelivered(rec, now)
	}
	s.res.Acked = append(s.res.Acked, rec.info(space))
	s.observe(space, rec, true)
	s.stats.PacketsAcked++
	s.stats.BytesAcked += uint64(rec.bytes)
}

// onLateAcked handles the acknowledgement of a packet declared lost: the
// loss was spurious (RFC 9002 section 6.1 discusses why it happens).
func (s *Sender) onLateAcked(rec *sentPacket, space Space) {
	rec.state = stateAcked
	s.res.LateAcked = append(s.res.LateAcked, rec.info(space))
	s.stats.SpuriousLosses++
}

func (s *Sender) removeFromFlight(sp *spaceState, rec *sentPacket) {
	s.bytesInFlight -= int64(rec.bytes)
	if rec.has(flagAckEliciting) {
		sp.ackElicitingInFlight--
	}
}

// compact drops resolved records from the front of the ring.
func (sp *spaceState) compact() {
	for {
		f := sp.ring.front()
		if f == nil || f.state == stateOutstanding || f.state == stateLost {
			return
		}
		sp.ring.popFront()
	}
}

// updateRTT takes a sample when the largest acknowledged is newly
// acknowledged and an ack-eliciting packet is among the newly acknowledged
// (RFC 9002 section 5.1).
func (s *Sender) updateRTT(now time.Duration, space Space, ack *Ack) bool {
	acked := s.res.Acked
	last := &acked[len(acked)-1]
	if last.Number != ack.Ranges[0].Largest {
		return false
	}
	eliciting := false
	for i := range acked {
		if acked[i].AckEliciting {
			eliciting = true
			break
		}
	}
	if !eliciting {
		return false
	}
	delay := max(ack.Delay, 0)
	if space == SpaceInitial {
		// Section 5.3: the ack delay of Initial packets may be ignored;
		// the peer must acknowledge them at once.
		delay = 0
	}
	s.rtt.update(now, now-last.TimeSent, delay, s.handshakeConfirmed)
	return true
}

// processECN treats an increase of the ECN-CE count as congestion
// (RFC 9002 appendix B.7), dated by the largest acknowledged packet.
func (s *Sender) processECN(now time.Duration, sp *spaceState, ecn *wire.ECNCounts, prior int64) {
	if ecn == nil || ecn.CE <= sp.ecnCE {
		return
	}
	sp.ecnCE = ecn.CE
	s.stats.ECNCEIncreases++
	acked := s.res.Acked
	s.signal(now, CongestionEvent{
		Cause:           CauseECN,
		LargestSentTime: acked[len(acked)-1].TimeSent,
		PriorInFlight:   prior,
		BytesInFlight:   s.bytesInFlight,
	})
}

// informController gives the controller the ACK's growth information and
// rate sample.
func (s *Sender) informController(now time.Duration, acked []PacketInfo, prior int64, hasSample bool) {
	var bytes int64
	for i := range acked {
		if acked[i].InFlight {
			bytes += int64(acked[i].Bytes)
		}
	}
	s.ev = AckEvent{
		Acked:         acked,
		AckedBytes:    bytes,
		PriorInFlight: prior,
		BytesInFlight: s.bytesInFlight,
		RTT:           &s.rtt,
		HasRTTSample:  hasSample,
		Delivered:     s.rate.delivered,
		Rate:          s.rate.finish(s.rtt.MinRTT()),
	}
	s.cc.OnAck(now, &s.ev)
	s.path.onAck(now, &s.ev, s.cc.Window(), s.cc.InSlowStart(), s.mds)
	s.ev.Acked = nil
}
