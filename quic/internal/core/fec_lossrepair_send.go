package core

import (
	"time"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// Sending the repairs on detected loss (fec_lossrepair.go), and the
// connection's hooks: the lost packets loss recovery reports, the content
// of each source sent, and the probe timeout's probes.

// pickRepair builds the next repair to send: one over the sources known
// lost when they need it, else a probe's (probe: the packet is a probe
// timeout's), else an owed one.
func (f *fecSender) pickRepair(probe bool) ([]byte, fec.RepairID, repairKind, bool) {
	if f.lossRepairsNeeded() > 0 {
		if data, id, ok := f.repairFrom(f.loss.waiting[0]); ok {
			return data, id, repairOnLoss, true
		}
	}
	if probe && f.loss.probes > 0 {
		if data, id, ok := f.repairFrom(f.keepFrom()); ok {
			return data, id, repairProbe, true
		}
		f.loss.probes = 0
	}
	data, id, ok := f.nextRepair()
	return data, id, repairOwed, ok
}

// repairFrom builds a repair over the sources from first to the newest.
func (f *fecSender) repairFrom(first uint64) ([]byte, fec.RepairID, bool) {
	if first >= f.src.next {
		return nil, fec.RepairID{}, false
	}
	prev := f.enc.Window()
	f.enc.SetWindow(int(f.src.next - first))
	var err error
	f.buf, err = f.enc.AppendRepair(f.buf[:0])
	f.enc.SetWindow(prev)
	if err != nil {
		return nil, fec.RepairID{}, false
	}
	id, _ := fec.ParseRepairID(f.buf)
	return f.buf, id, true
}

// onPickedRepairSent records a repair of kind sent in packet pn.
func (f *fecSender) onPickedRepairSent(pn uint64, id fec.RepairID, bytes int, kind repairKind) {
	f.noteRepairSize(bytes)
	if f.loss.usingExempt {
		f.loss.exempt--
		f.loss.usingExempt = false
	}
	if kind == repairOwed {
		f.onRepairSent(pn, id, bytes)
		return
	}
	// It serves an owed repair too, already paid for; else it takes
	// from the allowance.
	if f.owed > 0 {
		f.owed--
		f.budget.spend(bytes)
	} else {
		f.budget.spendInDebt(bytes, lossRepairMaxDebt)
	}
	if kind == repairProbe {
		f.stats.RepairProbesSent++
	} else {
		f.stats.LossRepairsSent++
	}
	f.loss.probes = max(f.loss.probes-1, 0)
	f.tail.done = true
	f.stats.RepairsSent++
	f.stats.RepairBytesSent += uint64(bytes)
	first := f.src.extend(id.FirstESI)
	f.loss.onRepairSent(pn, first, first+uint64(id.NSS))
}

// onPickedRepairDropped undoes the pick of a repair that did not fit its
// packet: an owed one is dropped (the next covers the same); the others
// are picked again, but not due before the next result (stalled), unless
// the packet was a probe timeout's: probes are held to the base size
// (pmtuState.budget), and the full-size packets after them carry the
// repair.
func (f *fecSender) onPickedRepairDropped(kind repairKind, probe bool) {
	switch {
	case kind == repairOwed:
		f.owed--
	case !probe:
		f.loss.stalled = true
	case kind == repairOnLoss:
		f.loss.exempt = min(f.loss.exempt+1, maxExemptRepairs)
	}
}

// maxExemptRepairs bounds the repairs sent in place of a probe timeout's
// probes: two probes at most (RFC 9002 section 6.2.4).
const maxExemptRepairs = 2

// exemptRepairDue reports whether a repair on loss may go now past the
// congestion window and the pacer in place of a probe that could not
// carry it (lossRepair.exempt).
func (f *fecState) exemptRepairDue() bool {
	return f.lossRepairDue() && f.send.loss.exempt > 0
}

// grantExempt lets the datagram being built under permit carry a repair
// on loss in place of a probe (lossRepair.exempt) when the window or the
// pacer holds it back; endExempt ends the grant once it is built.
func (c *Conn) grantExempt(permit *sendPermit) bool {
	if permit.eliciting || permit.probe[spaceApp] || !c.fec.exemptRepairDue() {
		return false
	}
	permit.eliciting = true
	c.fec.send.loss.usingExempt = true
	return true
}

func (c *Conn) endExempt() {
	if c.fec != nil && c.fec.send != nil {
		c.fec.send.loss.usingExempt = false
	}
}

// lossRepairDue reports whether repairs over sources known lost wait to
// be sent (f may be nil: FEC is off).
func (f *fecState) lossRepairDue() bool {
	return f != nil && f.send != nil && f.send.lossRepairsNeeded() > 0 && !f.send.loss.stalled
}

// probeRepairDue reports whether the packet being built may carry a probe
// timeout's repair.
func (f *fecState) probeRepairDue(s recovery.Space, permit *sendPermit) bool {
	return f != nil && f.send != nil && s == spaceApp && permit.probe[s] && f.send.loss.probes > 0
}

// onLossRepairResult records, before their frames are handled, the lost
// packets of res that were FEC sources whose content is not sent again:
// they wait for repairs. What res tells of the last overdue take, at now,
// tunes the overdue deadline (fec_lossrepair_overdue.go).
func (c *Conn) onLossRepairResult(now time.Duration, res *recovery.Result) {
	if c.fec == nil || c.fec.send == nil || c.fec.cfg.NoLossRepair {
		return
	}
	c.onOverdueResult(now, res)
	c.fec.send.loss.exempt = 0 // an ACK came: the window decides again
	sp := c.spaces[spaceApp]
	for _, p := range res.Lost {
		if p.Space != spaceApp {
			continue
		}
		if seq, ok := unresentSource(sp, p.Number); ok {
			c.fec.send.loss.onSourceLost(seq)
		}
	}
}

// noteSourceContent marks the source just sent at now, whose packet
// carried frames, as one whose content is not sent again if it is lost:
// repairs do not hold its loss (coverWindow), since repairs on detected
// loss count those in flight over it instead, and it is watched until
// acknowledged (fec_lossrepair_overdue.go).
func (f *fecState) noteSourceContent(now time.Duration, frames []sentFrame) {
	if f == nil || f.send == nil || f.cfg.NoLossRepair || carriesData(frames) {
		return
	}
	seq := f.send.src.next - 1
	if e := f.send.src.at(seq); e != nil {
		e.unresent = true
		f.send.loss.overdue.push(seq, now)
	}
}

// unresentSource returns the sequence number of the FEC source that packet
// pn carried if its content is not sent again when lost.
func unresentSource(sp *pnSpace, pn uint64) (uint64, bool) {
	rec := sp.sent.at(pn)
	if rec == nil || !rec.live {
		return 0, false
	}
	frames := rec.frames()
	seq, ok := sourceSeq(frames)
	return seq, ok && !carriesData(frames)
}

// sourceSeq returns the sequence number of a packet's FEC_SOURCE_ID frame.
func sourceSeq(frames []sentFrame) (uint64, bool) {
	for i := range frames {
		if frames[i].kind == fkFECSourceID {
			return frames[i].id, true
		}
	}
	return 0, false
}

// probeWithRepairs makes a probe timeout's n probes repairs when every
// ack-eliciting packet in flight is a FEC source whose content is not
// sent again, a repair or a PING: a PING would only learn what a repair
// can also rebuild. It reports whether it did.
func (c *Conn) probeWithRepairs(n int) bool {
	if c.fec == nil || c.fec.send == nil || c.fec.cfg.NoLossRepair || c.fec.send.keepFrom() >= c.fec.send.src.next {
		return false
	}
	only := true
	c.spaces[spaceApp].sent.each(func(_ uint64, frames []sentFrame) bool {
		only = !hasEliciting(frames) || !carriesData(frames)
		return only
	})
	if only {
		c.fec.send.loss.probes = n
		sent := &c.spaces[spaceApp].sent
		c.fec.send.onProbeTimeout(func(pn uint64) bool {
			rec := sent.at(pn)
			return rec != nil && rec.live
		})
	}
	return only
}

// lossRepairCover is the deadline to which an owed repair sent at now
// holds the sources it covers from being declared lost; a repair on loss
// or a probe holds none (ok false): its sources' loss is what triggers
// the next repairs, and holding it would only delay them.
func (c *Conn) lossRepairCover(now time.Duration, kind repairKind) (time.Duration, bool) {
	if kind != repairOwed {
		return 0, false
	}
	rtt := c.sender.RTT()
	return now + rtt.SmoothedRTT() + max(4*rtt.RTTVar(), time.Millisecond) + rtt.MaxAckDelay(), true
}
