package core

import (
	"slices"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// Repairs on detected loss. A source symbol whose content is not sent
// again when its packet is lost (DATAGRAM frames, never retransmitted,
// RFC 9221 section 5.2) is gone for good once loss detection declares it
// lost (RFC 9002 section 6.1), unless FEC rebuilds it. Proactive and tail
// repairs usually do, but an outage takes the whole tail of a burst with
// its repairs, and a tunnelled TCP then waits for its own retransmission
// timeout (200 ms or more). So when loss detection declares such a source
// lost and the peer has not reported it rebuilt, the sender sends repairs
// whose window starts at it and ends at the newest source: one per source
// lost in that window and not rebuilt, less the repairs that cover one of
// them, in flight or received without having rebuilt anything yet (a
// repair is one equation, RFC 8681 section 3.7.2, which the peer's decoder
// holds until it can solve; the lost sources whose data was sent again
// count too, since the peer's decoder still misses them). The repairs are
// congestion controlled and paced like any packet (the send permit). A
// probe timeout with only such sources unacknowledged (an outage took the
// tail of a burst and its repairs) takes every one of them outstanding
// for lost (onProbeTimeout) and sends repairs over them at once, the
// first as its probes rather than PINGs (RFC 9002 section 6.2.4 lets a
// probe carry any ack-eliciting frame) when they fit the probes' base
// size (else as many full-size repairs go past the congestion window
// after them, in their place): the ACK of the probes then shows which are
// still missing. A
// sender that sends again after the outage moves the probe timeout on;
// fec_lossrepair_overdue.go watches each such source from its own send
// time instead.
//
// How far back: a repair's window is at most the sending window, the
// smaller of FECConfig.MaxWindow and the peer's (1024 sources by
// default), and the peer's decoder keeps the sources of that many ESIs
// behind the newest it has seen (fec.Decoder). A lost source that more
// than that many newer sources have passed is given up (FECStats
// LostSourcesGivenUp); the encoder keeps its symbol until then, so the
// memory is the encoder's and decoder's window, MaxWindow symbols each
// (about 1.2 MB at the default). At 100 Mbit/s of 1200-byte packets that
// window is about 100 ms of traffic, two round trips of a 50 ms path such
// as starlink: a repair sent one to two round trips after its source is
// still decodable at full rate, and on sparser traffic much later.
//
// Cost: these repairs are proportional to the loss, so they take their
// bytes from the overhead allowance (fec_budget.go) and may run it into a
// debt of up to lossRepairMaxDebt full repairs, which the proactive and
// tail repairs then wait to be paid back (MaxOverhead still bounds the
// repairs over time). A loss that needs more repairs than the allowance and the debt
// can give is left to the application: repairs that rebuild nothing
// (fewer equations than unknowns) would only cost, so the oldest lost
// sources are given up until the rest can be repaired. A repair sent for
// a source known lost, or as a probe, also counts as an owed proactive
// repair: its window ends at the newest source, as theirs does. They are
// counted apart (FECStats LossRepairsSent, RepairProbesSent; qlog
// fec:repair_sent with "trigger"). This file keeps the count;
// fec_lossrepair_send.go picks and sends the repairs and holds the
// connection's hooks.

const (
	// lossRepairMaxDebt is how far below zero the overhead allowance may
	// go for repairs of sources known lost, in full repairs: with the
	// allowance saved up (fecMaxCredit), the repairs of an outage that
	// took about fifty packets, such as starlink's 40 ms outage in the
	// middle of the responses of five HTTP connections through a tunnel
	// (forty full packets). With a debt of 8 most of such a burst was
	// given up and left to the tunnelled TCP's recovery, which took
	// several round trips more. Proactive and tail repairs wait while the
	// sources sent pay the debt back (at MaxOverhead 10%, 480 full
	// sources: about a second of five such connections), so MaxOverhead
	// still bounds the repairs over time.
	lossRepairMaxDebt = 48
	// lossRepairMaxFlights bounds the repairs remembered; past it the
	// oldest is forgotten, and a count of what is needed may ask for a
	// repair more than strictly needed.
	lossRepairMaxFlights = 128
)

// repairKind is why a repair is sent.
type repairKind uint8

const (
	// repairOwed: proactive or tail repair the controller owed.
	repairOwed repairKind = iota
	// repairOnLoss: over sources loss detection declared lost.
	repairOnLoss
	// repairProbe: a probe timeout's probe.
	repairProbe
)

// qlogTrigger names a repair's kind in qlog ("" for an owed one).
func (k repairKind) qlogTrigger() string {
	switch k {
	case repairOnLoss:
		return "loss"
	case repairProbe:
		return "probe"
	}
	return ""
}

// repairFlight is a repair sent: its packet and the sources it covers.
type repairFlight struct {
	pn, first, end uint64
}

// lossRepair is the sender's state for repairs on detected loss.
type lossRepair struct {
	// reach is the sending window: how far back a repair reaches.
	reach uint64
	// waiting are the sequence numbers, ascending, of the lost sources
	// whose content is not sent again and that may still be rebuilt:
	// declared lost, or still outstanding when a probe timeout took them
	// for lost (onProbeTimeout).
	waiting []uint64
	// flights are the repairs in flight, or received and not known to
	// have gone into a rebuild, oldest first.
	flights []repairFlight
	// probes is the number of probe timeout probes to send as repairs.
	probes int
	// exempt counts the probes of a probe timeout that could not carry
	// a repair on loss (they keep to the base size, pmtuState.budget,
	// and a repair over full-size sources does not fit) and went as
	// PINGs: as many full-size repairs on loss then go in their place
	// past the congestion window and the pacer, as the probes would
	// have (RFC 9002 section 7.5), rather than wait for the probes'
	// ACK. An ACK ends the exemption. usingExempt marks the datagram
	// being built as one of them (fec_lossrepair_send.go).
	exempt      int
	usingExempt bool
	// unknowns and covered are scratch of countNeeded: the lost sources
	// of the window being counted, and for each repair remembered the
	// newest of them it covers.
	unknowns, covered []uint64
	// need caches the repairs needed; dirty asks for a recount.
	need  int
	dirty bool
	// overdue watches the sources whose content is not sent again until
	// they are acknowledged or a probe timeout old
	// (fec_lossrepair_overdue.go).
	overdue overdueWatch
	// stalled: a repair picked could not be sent (the sender is
	// overloaded, or it did not fit its packet); none is due until the
	// next recount, so that the connection does not wake for it again
	// and again at one instant.
	stalled bool
}

// onSourceLost records that the source seq was declared lost and that its
// content will not be sent again.
func (l *lossRepair) onSourceLost(seq uint64) {
	i, found := slices.BinarySearch(l.waiting, seq)
	if !found {
		l.waiting = slices.Insert(l.waiting, i, seq)
	}
	l.dirty = true
}

// isWaiting reports whether seq waits for a repair.
func (l *lossRepair) isWaiting(seq uint64) bool {
	_, found := slices.BinarySearch(l.waiting, seq)
	return found
}

// oldest returns the oldest source waiting for a repair.
func (l *lossRepair) oldest() (uint64, bool) {
	if len(l.waiting) == 0 {
		return 0, false
	}
	return l.waiting[0], true
}

// onRepairSent records a repair in flight in packet pn over [first, end).
func (l *lossRepair) onRepairSent(pn, first, end uint64) {
	if len(l.flights) == lossRepairMaxFlights {
		l.flights = append(l.flights[:0], l.flights[1:]...)
	}
	l.flights = append(l.flights, repairFlight{pn: pn, first: first, end: end})
	l.dirty = true
}

// onResult forgets the repairs whose packets were lost. Those
// acknowledged stay: the peer holds their equations until they rebuild
// something (onRebuilt) or leave its window (countNeeded).
func (l *lossRepair) onResult(res *recovery.Result) {
	if len(res.Acked)+len(res.Lost)+len(res.Recovered) > 0 {
		l.dirty = true
	}
	if len(l.flights) == 0 || len(res.Lost) == 0 {
		return
	}
	l.flights = slices.DeleteFunc(l.flights, func(r repairFlight) bool {
		return containsPacket(res.Lost, r.pn)
	})
}

// onRebuilt forgets the repairs whose window holds seq, a source the peer
// rebuilt: their equations may have gone into it.
func (l *lossRepair) onRebuilt(seq uint64) {
	l.flights = slices.DeleteFunc(l.flights, func(r repairFlight) bool {
		return r.first <= seq && seq < r.end
	})
	l.dirty = true
}

// containsPacket reports whether ps holds the 1-RTT packet pn.
func containsPacket(ps []recovery.PacketInfo, pn uint64) bool {
	for i := range ps {
		if ps[i].Number == pn && ps[i].Space == spaceApp {
			return true
		}
	}
	return false
}

// keepFrom is the oldest source the encoder must keep: the oldest still
// outstanding, or older, the oldest waiting for a repair.
func (f *fecSender) keepFrom() uint64 {
	from := f.src.oldestOutstanding()
	if w, ok := f.loss.oldest(); ok {
		from = min(from, w)
	}
	return from
}

// logHorizon is how many sources back the source log keeps lost ones:
// the controller's window, or back to the oldest waiting for a repair.
func (f *fecSender) logHorizon() uint64 {
	h := uint64(f.enc.Window())
	if w, ok := f.loss.oldest(); ok && w < f.src.next {
		h = max(h, f.src.next-w)
	}
	return h
}

// lossRepairsNeeded returns the repairs still to send over the sources
// known lost, giving up those that are out of reach or that the allowance
// cannot repair.
func (f *fecSender) lossRepairsNeeded() int {
	l := &f.loss
	if !l.dirty && (len(l.waiting) == 0 || l.waiting[0]+l.reach >= f.src.next) {
		// Nothing changed, and the new sources sent since the count
		// left the oldest waiting one within reach.
		return l.need
	}
	l.dirty, l.stalled = false, false
	l.need = 0
	f.pruneWaiting()
	if len(l.waiting) > 0 {
		l.need = f.countNeeded()
	}
	return l.need
}

// pruneWaiting drops from the sources waiting for a repair those rebuilt
// or acknowledged late, and those beyond the sending window.
func (f *fecSender) pruneWaiting() {
	l := &f.loss
	l.waiting = slices.DeleteFunc(l.waiting, func(seq uint64) bool {
		if seq+l.reach < f.src.next {
			f.stats.LostSourcesGivenUp++
			return true
		}
		e := f.src.at(seq)
		return e == nil || e.state == sourceAcked
	})
}

// countNeeded returns the repairs needed over the window from the oldest
// source waiting to the newest source: its lost sources, less the repairs
// in flight or received that cover one of them. When the allowance and
// its debt cannot pay for them, the oldest waiting sources are given up,
// one at a time, until what the rest need fits (or none is left).
//
// It walks the waiting and lost sources and the repairs only, never each
// source of the window: at gigabits a window holds a thousand sources,
// and the count runs after every ACK. A repair counts for a window start
// while the newest unknown it covers is at or after that start, so one
// pass over the waiting sources, oldest first, finds the first start
// that fits.
func (f *fecSender) countNeeded() int {
	l := &f.loss
	// The peer forgets the equations of repairs reaching out of its
	// window.
	l.flights = slices.DeleteFunc(l.flights, func(r repairFlight) bool { return r.first+l.reach < f.src.next })
	l.unknowns = f.unknownsFrom(l.unknowns[:0], l.waiting[0])
	l.covered = l.covered[:0]
	for _, r := range l.flights {
		i, _ := slices.BinarySearch(l.unknowns, r.end)
		if i > 0 && l.unknowns[i-1] >= r.first {
			l.covered = append(l.covered, l.unknowns[i-1])
		}
	}
	slices.Sort(l.covered)
	u, c := 0, 0
	for k, first := range l.waiting {
		for u < len(l.unknowns) && l.unknowns[u] < first {
			u++
		}
		for c < len(l.covered) && l.covered[c] < first {
			c++
		}
		need := max((len(l.unknowns)-u)-(len(l.covered)-c), 0)
		if f.budget.affordsInDebt(need, lossRepairMaxDebt) {
			f.giveUpWaiting(k)
			return need
		}
	}
	f.giveUpWaiting(len(l.waiting))
	return 0
}

// unknownsFrom appends to dst, ascending, the sources from first to the
// newest that the peer misses: those waiting for a repair and those
// declared lost (whose data, if any, was sent again as new sources, which
// do not help the peer's decoder).
func (f *fecSender) unknownsFrom(dst []uint64, first uint64) []uint64 {
	waiting := f.loss.waiting
	lost := f.src.lost
	i, _ := slices.BinarySearch(lost, first)
	lost = lost[i:]
	for len(waiting) > 0 || len(lost) > 0 {
		switch {
		case len(lost) == 0 || len(waiting) > 0 && waiting[0] < lost[0]:
			dst = append(dst, waiting[0])
			waiting = waiting[1:]
		case len(waiting) > 0 && waiting[0] == lost[0]:
			dst = append(dst, waiting[0])
			waiting, lost = waiting[1:], lost[1:]
		default:
			if e := f.src.at(lost[0]); e != nil && e.state == sourceLost {
				dst = append(dst, lost[0])
			}
			lost = lost[1:]
		}
	}
	return dst
}

// giveUpWaiting gives up the n oldest sources waiting for a repair.
func (f *fecSender) giveUpWaiting(n int) {
	if n == 0 {
		return
	}
	l := &f.loss
	f.stats.LostSourcesGivenUp += uint64(n)
	l.waiting = append(l.waiting[:0], l.waiting[n:]...)
}

// onProbeTimeout takes for lost, when a probe timeout fires with only
// sources whose content is not sent again, repairs and PINGs in flight,
// every such source outstanding and every repair still in flight: the
// last packets of a burst and all their repairs went unanswered for
// longer than their acknowledgement could take, which on a satellite
// path is an outage (starlink's 40 ms every 15 s). Repairs over them then
// go at once, with the probes, rather than a round trip later when the
// probes' acknowledgement declares the sources lost: by then the
// congestion controller answers the loss of the whole burst with packet
// conservation and lets the repairs out one per ACK, while a tunnelled
// TCP's retransmission timer (200 ms) runs. A source that arrived after
// all is acknowledged and leaves the list (pruneWaiting); what the
// repairs sent for it cost is bounded by the allowance, as for any
// repair on loss.
func (f *fecSender) onProbeTimeout(inFlight func(pn uint64) bool) {
	l := &f.loss
	for seq := f.src.oldestOutstanding(); seq < f.src.next; seq++ {
		if e := f.src.at(seq); e != nil && e.state == sourceOutstanding && e.unresent {
			l.onSourceLost(seq)
		}
	}
	l.flights = slices.DeleteFunc(l.flights, func(r repairFlight) bool { return inFlight(r.pn) })
	l.dirty = true
}
