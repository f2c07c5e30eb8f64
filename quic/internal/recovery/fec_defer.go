package recovery

import "time"

// Under FECHide (and FECAuto, where the path shows no congestion when the
// source is declared lost: fec_auto.go) a packet the peer rebuilt from
// repairs is delivered, not
// lost, for the controller (OnRecovered). Loss detection can declare a
// source lost before the rebuild is reported: when no repair covered it
// yet (the first round trips of a connection, whose controller starts
// from a clean-path prior, send few repairs) the packet threshold
// condemns it on the ACK that shows it missing, and the repair the sender
// then sends in reaction rebuilds it a round trip later. Its frames are
// sent again at once, as for any loss; only its congestion signal waits,
// until the report of that repair could have come back (a PTO period
// with the peer's ack delay, as CoverPacket's deadlines). Reported
// rebuilt by then, the loss never reaches the controller; otherwise it
// signals then. Without the wait, a random loss in the first round of a
// GEO connection ended its slow start: tens of seconds at a Mbit/s.

// deferredLoss is a FEC source declared lost whose signal waits.
type deferredLoss struct {
	space    Space
	pn       uint64
	timeSent time.Duration
	bytes    int64
	due      time.Duration
}

// deferLoss holds the congestion signal of a source just declared lost.
func (s *Sender) deferLoss(now time.Duration, space Space, rec *sentPacket) {
	due := now + s.rtt.ptoBase(s.cfg.Granularity) + s.rtt.maxAckDelay
	s.deferred = append(s.deferred, deferredLoss{space: space, pn: rec.number, timeSent: rec.timeSent, bytes: int64(rec.bytes), due: due})
	s.stats.LossSignalsDeferred++
}

// undeferLoss drops the held signal of a lost source the peer reported
// rebuilt, and returns it if there was one: under FECAuto the report may
// find the path congested, and the caller signals it then.
func (s *Sender) undeferLoss(space Space, pn uint64) (deferredLoss, bool) {
	for i := range s.deferred {
		if d := s.deferred[i]; d.space == space && d.pn == pn {
			s.deferred = append(s.deferred[:i], s.deferred[i+1:]...)
			return d, true
		}
	}
	return deferredLoss{}, false
}

// fireDeferred signals, as one loss event, the held losses that are due.
// It runs whenever an ACK, a FEC report or the loss timer is processed;
// one arriving late delays the signal, never drops it.
func (s *Sender) fireDeferred(now time.Duration) {
	var bytes int64
	var newest time.Duration
	keep := s.deferred[:0]
	for _, d := range s.deferred {
		if d.due > now {
			keep = append(keep, d)
			continue
		}
		bytes += d.bytes
		newest = max(newest, d.timeSent)
		s.auto.onUnrepaired(now, s.rtt.SmoothedRTT())
	}
	clear(s.deferred[len(keep):])
	s.deferred = keep
	if bytes == 0 {
		return
	}
	s.signal(now, CongestionEvent{
		Cause:           CauseLoss,
		LostBytes:       bytes,
		LargestSentTime: newest,
		PriorInFlight:   s.bytesInFlight,
		BytesInFlight:   s.bytesInFlight,
	})
}

// deferredBytes is the size of the lost packets whose signal waits.
func (s *Sender) deferredBytes(space Space, lost []PacketInfo) int64 {
	var n int64
	sp := &s.spaces[space]
	for i := range lost {
		if rec := sp.ring.at(lost[i].Number); rec != nil && rec.has(flagDeferSignal) && lost[i].InFlight {
			n += int64(lost[i].Bytes)
		}
	}
	return n
}
