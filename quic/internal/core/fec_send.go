package core

import (
	"math"
	"slices"
	"time"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// The sending half of FEC. Every 1-RTT packet that carries the
// application's data, STREAM or DATAGRAM frames, is a source symbol
// (hasFECSourceData): it starts with a FEC_SOURCE_ID frame giving its
// sequence number, and the rest of its payload is the symbol. Repair
// symbols over the most recent unacknowledged sources go in packets of
// their own (an ACK may ride along), sent before new data, counted in
// flight and paced.
//
// The redundancy controller is fed from the sender's own view: a source
// whose packet is acknowledged arrived, one the peer reports recovered
// (FEC_RECOVERED) was lost and rebuilt, the gaps in between were lost. A
// fec.LossMonitor turns that into the reports the controller reads, so no
// feedback frame is needed.
//
// Loss detection knows about it: each repair holds the packets it covers
// from being declared lost until it could have reached the peer and its
// FEC_RECOVERED come back (recovery.Sender.CoverPacket), and recovered
// packets are delivered, never retransmitted (OnRecovered).

// fecReserve is what a protected packet leaves free so that a repair over
// it fits a packet of the same size: the FEC_REPAIR frame type (2 bytes),
// the Repair FEC Payload ID (8), the symbol's length prefix (2), and a
// margin for a longer packet number in the repair's header (2). The
// FEC_SOURCE_ID frame (at most 6 bytes for sequence numbers below 2^30)
// lives inside the reserve.
const fecReserve = wire.FECRepairOverhead + fec.RepairIDLen + 2 + 2

// fecMaxSourceIDLen is the longest FEC_SOURCE_ID frame fecReserve makes
// room for.
const fecMaxSourceIDLen = 6

// fecSender is the sending half of a connection's FEC.
type fecSender struct {
	cfg FECConfig
	// padSources: the peer takes PADDING before FEC_SOURCE_ID, and full
	// source packets are padded to a repair's size (fec_pad.go);
	// lastRepairSymbol is the symbol length of the last repair sent.
	padSources       bool
	lastRepairSymbol int
	enc              *fec.Encoder
	ctrl             fec.Controller
	mon              *fec.LossMonitor
	src              sourceLog
	// owed is the number of repairs to send before new data.
	owed int
	// budget is the overhead allowance (fec_budget.go).
	budget repairBudget
	// givenUp: the outstanding sources before it are left to loss
	// recovery (giveUp).
	givenUp uint64
	// tail is the protection of the newest sources when the application
	// stops sending (fec_tail.go).
	tail tailState
	// loss is the repair of sources known lost (fec_lossrepair.go).
	loss  lossRepair
	buf   []byte
	stats FECStats
}

// newFECSender starts FEC toward a peer that decodes up to peerWindow
// symbols.
func newFECSender(cfg FECConfig, peerWindow int, maxSymbol int) (*fecSender, error) {
	window := min(cfg.MaxWindow, peerWindow)
	enc, err := fec.NewEncoder(fec.EncoderConfig{MaxWindow: window, DT: fec.MaxDT, MaxSymbolSize: maxSymbol})
	if err != nil {
		return nil, err
	}
	ctrl, err := cfg.newController(window)
	if err != nil {
		return nil, err
	}
	mon, err := fec.NewLossMonitor(fec.MonitorConfig{FeedbackPolicy: ctrl.FeedbackPolicy()})
	if err != nil {
		return nil, err
	}
	return &fecSender{
		cfg: cfg, enc: enc, ctrl: ctrl, mon: mon,
		budget: newRepairBudget(cfg.MaxOverhead, maxSymbol),
		tail:   tailState{done: true},
		loss:   lossRepair{reach: uint64(window)},
	}, nil
}

// nextSeq is the sequence number the next source symbol gets.
func (f *fecSender) nextSeq() uint64 { return f.src.next }

// onSourceSent records that packet pn went out carrying source symbol
// data (its payload after the FEC_SOURCE_ID frame).
func (f *fecSender) onSourceSent(pn uint64, data []byte) error {
	if _, err := f.enc.AddSource(data); err != nil {
		return err
	}
	seq := f.src.push(pn, len(data))
	f.stats.SourcesSent++
	f.stats.SourceBytesSent += uint64(len(data))
	f.budget.earn(len(data))
	f.owe(f.ctrl.OnSource(uint32(seq)))
	f.tail.done = false
	return nil
}

// onPacketSent gives the encoder the symbol of a sent source packet pn,
// whose plaintext payload starts with FEC_SOURCE_ID. idle: the
// application has nothing more to send, and the newest sources get the
// repairs of a tail (fec_tail.go).
func (f *fecSender) onPacketSent(pn uint64, payload []byte, idle bool) error {
	_, n, ok := sourceID(payload)
	if !ok {
		return nil
	}
	if err := f.onSourceSent(pn, payload[n:]); err != nil {
		return err
	}
	if idle {
		f.protectTail()
	}
	return nil
}

// owe adds n repairs to send, as many as the overhead allowance holds
// (fec_budget.go).
func (f *fecSender) owe(n int) {
	for i := range n {
		if !f.oweAffordable(1) {
			f.stats.RepairsCapped += uint64(n - i - 1)
			return
		}
	}
}

// nextRepair builds the next owed repair's FEC_REPAIR frame data, or
// reports false when none is owed or every source was acknowledged.
func (f *fecSender) nextRepair() ([]byte, fec.RepairID, bool) {
	if f.owed == 0 {
		return nil, fec.RepairID{}, false
	}
	cost := f.repairCost()
	if cost == 0 {
		f.owed = 0
		return nil, fec.RepairID{}, false
	}
	if !f.budget.affords(1, cost) {
		// The window's sources grew since the repairs were owed.
		f.stats.RepairsCapped += uint64(f.owed)
		f.owed = 0
		return nil, fec.RepairID{}, false
	}
	var err error
	f.buf, err = f.enc.AppendRepair(f.buf[:0])
	if err != nil {
		f.owed = 0
		return nil, fec.RepairID{}, false
	}
	id, _ := fec.ParseRepairID(f.buf)
	return f.buf, id, true
}

// onRepairSent records a repair that went out in packet pn over the
// window of id.
func (f *fecSender) onRepairSent(pn uint64, id fec.RepairID, bytes int) {
	f.owed--
	f.tail.done = true
	f.stats.RepairsSent++
	f.stats.RepairBytesSent += uint64(bytes)
	f.budget.spend(bytes)
	first := f.src.extend(id.FirstESI)
	f.loss.onRepairSent(pn, first, first+uint64(id.NSS))
	if end := first + uint64(id.NSS); end == f.src.next {
		f.tail.remember(tailRepair{pn: pn, first: first, end: end})
	}
}

// onResult feeds what loss recovery learned about 1-RTT packets to the
// loss monitor, the source log and the controller.
func (f *fecSender) onResult(res *recovery.Result) {
	for _, p := range res.Acked {
		if seq, ok := f.src.finish(p.Space, p.Number, sourceAcked); ok {
			f.mon.OnSource(uint32(seq))
		}
	}
	for _, p := range res.Acked {
		if p.Space == spaceApp && len(f.tail.repairs) > 0 {
			f.onTailAcked(p.Number)
		}
	}
	for _, p := range res.Recovered {
		if seq, ok := f.src.finish(p.Space, p.Number, sourceAcked); ok {
			f.mon.OnRecovered(uint32(seq))
			f.loss.onRebuilt(seq)
		}
	}
	for _, p := range res.Lost {
		f.src.finish(p.Space, p.Number, sourceLost)
	}
	f.loss.onResult(res)
	f.src.compact(f.logHorizon())
	f.enc.Forget(uint32(f.keepFrom()))
	for {
		fb, ok := f.mon.Report()
		if !ok {
			break
		}
		if !f.oweReaction(f.ctrl.OnFeedback(fb)) && fb.Unrecovered > 0 {
			f.giveUp(f.src.extend(fb.LastESI()) + 1)
		}
	}
	f.narrowReaction()
}

// missingFollower is a controller whose reaction follows, between
// reports, which sources are still missing (fec.AdaptiveController).
type missingFollower interface {
	OnMissing(oldest uint32, ok bool)
}

// narrowReaction tells the controller which source is the oldest still
// missing now that ACKs and FEC_RECOVERED frames were read: the peer
// reports rebuilt sources one ACK after it rebuilt them, long before the
// next report, and repairs need not reach back over them.
func (f *fecSender) narrowReaction() {
	if m, ok := f.ctrl.(missingFollower); ok {
		m.OnMissing(f.mon.OldestMissing())
	}
}

// giveUp leaves the sources before end still outstanding to loss recovery:
// they are known lost, and the repairs that could rebuild them were not
// sent, so no later repair holds them from retransmission (coverWindow).
// Without it every repair of the controller's widened window (it reaches
// back to the oldest missing source) pushed their deadline on, and a
// burst of nine waited a quarter of a second before its retransmission.
func (f *fecSender) giveUp(end uint64) {
	f.givenUp = max(f.givenUp, end)
}

// oweReaction adds the n repairs of a reaction to sources known lost, all
// of them or none, and reports whether they are owed. A reaction rebuilds nothing unless its repairs reach
// the number of sources missing in their window: the retransmission of a
// lost source is a new source, which does not help decode the old one
// (RFC 8681 section 3 codes over the symbols as first sent). Part of a
// reaction would cost its repairs and, worse, hold the lost packets from
// loss recovery until the repairs' deadline (coverWindow), delaying the
// retransmissions that must come anyway: after an outage, a whole flight
// of sources waited more than a round trip for repairs that could not
// rebuild them.
func (f *fecSender) oweReaction(n int) bool {
	return f.oweAffordable(n)
}

// coverWindow asks loss recovery to hold the packets of the sources in
// id's window that are still outstanding until the repair could have
// rebuilt them at the peer and the news come back; not those given up,
// nor those whose loss triggers repairs (sourceEntry.unresent).
func (f *fecSender) coverWindow(s *recovery.Sender, id fec.RepairID, until time.Duration) {
	first := f.src.extend(id.FirstESI)
	for seq := max(first, f.src.base, f.givenUp); seq < first+uint64(id.NSS) && seq < f.src.next; seq++ {
		if e := f.src.at(seq); e != nil && e.state == sourceOutstanding && !e.unresent {
			_ = s.CoverPacket(spaceApp, e.pn, until) // only an unsent pn fails
		}
	}
}

// recoveredPackets turns the peer's FEC_RECOVERED ranges of sequence
// numbers into descending ranges of the packet numbers that carried them,
// appended to dst.
func (f *fecSender) recoveredPackets(dst []wire.AckRange, seqs []wire.AckRange) []wire.AckRange {
	for _, r := range seqs {
		lo := max(r.Smallest, f.src.base)
		for seq := min(r.Largest+1, f.src.next); seq > lo; seq-- {
			e := f.src.at(seq - 1)
			if e == nil || e.state == sourceAcked {
				continue
			}
			if n := len(dst); n > 0 && dst[n-1].Smallest == e.pn+1 {
				dst[n-1].Smallest = e.pn
				continue
			}
			dst = append(dst, wire.AckRange{Smallest: e.pn, Largest: e.pn})
		}
	}
	return dst
}

// protects reports whether packets of space s written now are protected:
// 1-RTT packets once the peer offered FEC (f may be nil: FEC is off).
func (f *fecState) protects(s recovery.Space, early bool) bool {
	return f != nil && f.send != nil && s == spaceApp && !early
}

// reportDue reports whether an ACK should go out in space s to carry a
// FEC_RECOVERED frame right after a recovery (f may be nil).
func (f *fecState) reportDue(s recovery.Space) bool {
	return f != nil && s == spaceApp && f.recv.reportDue
}

// appendRepair fills a 1-RTT packet with the next repair: over sources
// known lost, a probe's (probe), or an owed one (fec_lossrepair.go), after
// an ACK frame if wantAck and one fits. It reports false when none is due
// or it does not fit, leaving the packet empty.
func (c *Conn) appendRepair(now time.Duration, w *packetWriter, sp *pnSpace, wantAck, probe bool) bool {
	fs := c.fec.send
	if c.sendBacklogged() {
		fs.shed()
		fs.loss.stalled = true
		return false
	}
	data, id, kind, ok := fs.pickRepair(probe)
	if !ok {
		return false
	}
	f := wire.FECRepairFrame{Data: data}
	need := f.Len()
	if need > w.room() {
		// A source grew past the reserve (a longer packet number):
		// this repair cannot be sent, the next one covers the same.
		fs.onPickedRepairDropped(kind, probe)
		return false
	}
	// FEC_REPAIR runs to the end of the packet: an ACK and a report go
	// before it.
	w.reserve(need)
	if wantAck {
		c.appendAck(now, w, sp)
	}
	c.fec.recv.appendReport(w, w.current().hasAck)
	w.reserve(-need)
	w.appendFrame(need, f.Append)
	w.record(sentFrame{kind: fkFECRepair, id: uint64(id.FirstESI), n: uint64(id.NSS)})
	fs.onPickedRepairSent(sp.nextPN, id, len(data), kind)
	if until, ok := c.lossRepairCover(now, kind); ok {
		fs.coverWindow(c.sender, id, until)
	}
	c.qlog.repairSent(now, id, kind.qlogTrigger())
	return true
}

// appendReport appends FEC_RECOVERED when the decoder rebuilt symbols the
// peer has not heard of: right after a recovery, and with every ACK frame
// (withAck) until the peer acknowledges a report.
func (r *fecReceiver) appendReport(w *packetWriter, withAck bool) {
	if !r.reportDue && !withAck {
		return
	}
	f, ok := r.buildReport()
	if !ok {
		r.reportDue = false
		return
	}
	for len(f.Ranges) > 1 && f.Len() > w.room() {
		f.Ranges = f.Ranges[:len(f.Ranges)-1]
	}
	if !w.appendFrame(f.Len(), f.Append) {
		return
	}
	r.reportDue = false
	w.record(sentFrame{kind: fkFECRecovered, id: f.Ranges[0].Largest})
}

// carriesRepair reports whether a packet's frames include a FEC_REPAIR: a
// repair packet, whose loss the FECHide policy does not take for
// congestion, nor FECAuto where the path shows none (recovery's
// fec_hide.go and fec_auto.go).
func carriesRepair(frames []sentFrame) bool {
	for i := range frames {
		if frames[i].kind == fkFECRepair {
			return true
		}
	}
	return false
}

// sourceState is what became of a source symbol's packet.
type sourceState uint8

const (
	sourceOutstanding sourceState = iota
	// sourceAcked: acknowledged, or recovered by the peer.
	sourceAcked
	// sourceLost: declared lost (its data was queued again). The peer may
	// still rebuild it, and its report must still find the packet: that
	// retransmission was spurious.
	sourceLost
)

// sourceEntry is a source symbol in flight: the packet that carried it
// and the symbol's length.
type sourceEntry struct {
	pn    uint64
	size  uint16
	state sourceState
	// unresent: the packet's content is not sent again if it is lost,
	// and repairs on detected loss look after it (fec_lossrepair.go).
	unresent bool
}

// sourceLog maps the sequence numbers of the sources in flight (base up to
// next-1) to their packets. Packet numbers grow with sequence numbers, so
// a packet's source is found by binary search. Lost sources stay while a
// repair could still rebuild them at the peer.
type sourceLog struct {
	ring       []sourceEntry // 256 entries, doubled as it fills: a power of two
	head, n    int
	base, next uint64
	// lost are the sequence numbers, ascending, of the sources declared
	// lost that are still in the log, and of some acknowledged late
	// since (their entry tells): repairs on loss count the peer's
	// unknowns from it without walking the whole window
	// (fecSender.countNeeded).
	lost []uint64
}

// slot is the entry i places after the oldest. The ring's length is a
// power of two, so that this is a mask and not a division: the binary
// search of finish takes about ten for each packet an ACK names.
func (l *sourceLog) slot(i int) *sourceEntry {
	return &l.ring[(l.head+i)&(len(l.ring)-1)]
}

func (l *sourceLog) push(pn uint64, size int) uint64 {
	if l.n == len(l.ring) {
		ring := make([]sourceEntry, max(2*len(l.ring), 256))
		for i := range l.n {
			ring[i] = *l.slot(i)
		}
		l.ring, l.head = ring, 0
	}
	*l.slot(l.n) = sourceEntry{pn: pn, size: uint16(min(size, math.MaxUint16)), state: sourceOutstanding}
	l.n++
	seq := l.next
	l.next++
	return seq
}

// at returns the entry of seq, or nil if it is not in the log.
func (l *sourceLog) at(seq uint64) *sourceEntry {
	if seq < l.base || seq >= l.next {
		return nil
	}
	return l.slot(int(seq - l.base))
}

// extend maps a 32-bit ESI to the sequence number nearest to the log.
func (l *sourceLog) extend(esi uint32) uint64 {
	return uint64(int64(l.next) + int64(int32(esi-uint32(l.next))))
}

// finish records the fate of the source carried by packet pn and returns
// its sequence number, or false if pn carried no source in the log or was
// already acknowledged.
func (l *sourceLog) finish(space recovery.Space, pn uint64, state sourceState) (uint64, bool) {
	if space != spaceApp || l.n == 0 {
		return 0, false
	}
	lo, hi := 0, l.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if l.slot(mid).pn < pn {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == l.n {
		return 0, false
	}
	e := l.slot(lo)
	if e.pn != pn || e.state == sourceAcked || e.state == state {
		return 0, false
	}
	e.state = state
	seq := l.base + uint64(lo)
	if state == sourceLost {
		l.noteLost(seq)
	}
	return seq, true
}

// noteLost adds seq to the lost sources; ACKs declare them lost oldest
// first, so it goes at the end but for a straggler.
func (l *sourceLog) noteLost(seq uint64) {
	if n := len(l.lost); n == 0 || l.lost[n-1] < seq {
		l.lost = append(l.lost, seq)
		return
	}
	if i, found := slices.BinarySearch(l.lost, seq); !found {
		l.lost = slices.Insert(l.lost, i, seq)
	}
}

// compact drops from the front the acknowledged entries, and the lost ones
// more than horizon sources old (no repair reaches them any more).
func (l *sourceLog) compact(horizon uint64) {
	for l.n > 0 {
		e := l.ring[l.head]
		if e.state == sourceOutstanding || (e.state == sourceLost && l.next-l.base <= horizon) {
			break
		}
		l.head = (l.head + 1) & (len(l.ring) - 1)
		l.n--
		l.base++
	}
	i := 0
	for i < len(l.lost) && l.lost[i] < l.base {
		i++
	}
	if i > 0 {
		l.lost = append(l.lost[:0], l.lost[i:]...)
	}
}

// oldestOutstanding is the sequence number of the oldest source neither
// acknowledged nor lost: repairs need not reach further back.
func (l *sourceLog) oldestOutstanding() uint64 {
	for i := range l.n {
		if l.slot(i).state == sourceOutstanding {
			return l.base + uint64(i)
		}
	}
	return l.next
}
