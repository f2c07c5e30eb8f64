package recovery

import "fmt"

// Path MTU discovery (RFC 9000 section 14.3, RFC 8899) lives in the core;
// the Sender gives it two things: probes whose loss is not congestion, and
// the fate of every in-flight packet.

// PacketObserver learns which in-flight packets the Sender declares
// acknowledged or lost, as it decides. Path MTU discovery watches its
// probes and, for black hole detection (RFC 8899 section 4.3), the losses
// of packets above a size. The Sender calls it from inside OnAck, OnTimeout
// and OnRecovered: an observer records what it needs and must not call
// back into the Sender.
type PacketObserver interface {
	PacketAcked(p PacketInfo)
	PacketLost(p PacketInfo)
}

// SetPacketObserver installs o; nil removes the observer.
func (s *Sender) SetPacketObserver(o PacketObserver) { s.observer = o }

// MarkPathProbe flags packet pn of space, just sent in flight, as a path
// MTU probe. A probe is lost because it is too large for the path more
// often than because the path is congested, so its loss is no congestion
// signal (RFC 9000 section 14.4, RFC 8899 section 3 item 7): it neither
// reduces the window, nor counts toward persistent congestion, nor counts
// as lost in delivery-rate samples. It stays in bytes in flight and arms
// the PTO like any ack-eliciting packet (a probe is one, RFC 9000 section
// 14.4), and PacketInfo.PathProbe reports it.
func (s *Sender) MarkPathProbe(space Space, pn uint64) error {
	sp, err := s.space(space)
	if err != nil {
		return err
	}
	rec := sp.ring.at(pn)
	if rec == nil || rec.state != stateOutstanding || !rec.has(flagAckEliciting) {
		return fmt.Errorf("%w: path probe %d is not an outstanding ack-eliciting packet", ErrInvalidPacket, pn)
	}
	rec.flags |= flagPathProbe
	return nil
}

// observe tells the observer about an in-flight packet newly acknowledged
// or declared lost.
func (s *Sender) observe(space Space, rec *sentPacket, acked bool) {
	if s.observer == nil || !rec.has(flagInFlight) {
		return
	}
	if acked {
		s.observer.PacketAcked(rec.info(space))
	} else {
		s.observer.PacketLost(rec.info(space))
	}
}

// unsignaledBytes is the size of the lost packets whose loss is no
// congestion signal (path probes, hidden repairs): they left bytes
// in flight but do not count as lost bytes for the controller.
func unsignaledBytes(lost []PacketInfo) int64 {
	var n int64
	for i := range lost {
		if (lost[i].PathProbe || lost[i].HiddenRepair) && lost[i].InFlight {
			n += int64(lost[i].Bytes)
		}
	}
	return n
}
