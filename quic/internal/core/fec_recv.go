package core

import (
	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/wire"
)

// The receiving half of FEC. A 1-RTT packet whose first frame is
// FEC_SOURCE_ID gives the decoder its source symbol; a FEC_REPAIR frame
// gives it a repair. A symbol the decoder rebuilds is a packet that never
// arrived: the frame loop (receive_frames.go) processes its frames as if
// it had (ACK frames aside, which are stale), and its sequence number goes
// into the FEC_RECOVERED frames sent with the next ACKs until the peer
// acknowledged one that covers it.
// The lost packet's number is not acknowledged: the peer learns from
// FEC_RECOVERED which of its packets the repair replaced.

// fecMaxReportRanges bounds the ranges of recovered sequence numbers kept
// for FEC_RECOVERED frames; older ones are forgotten (the peer then
// retransmits what it did not hear about, nothing is lost).
const fecMaxReportRanges = 32

// fecReceiver is the receiving half of a connection's FEC.
type fecReceiver struct {
	dec *fec.Decoder
	// highest is the highest sequence number seen, to extend the
	// decoder's 32-bit ESIs.
	highest uint64
	seen    bool
	// recovered holds the sequence numbers to report; reportDue asks for
	// a FEC_RECOVERED frame in the next packet, peerKnows is the largest
	// reported one the peer acknowledged.
	recovered rangeSet
	reportDue bool
	peerKnows uint64
	hasKnown  bool
	// pending holds rebuilt symbols (copies) until the packet being
	// processed is done, so that their frames never nest in its own.
	pending [][]byte
	// pendingSeq holds the sequence numbers of pending's symbols.
	pendingSeq []uint64
	spare      [][]byte
	report     wire.FECRecoveredFrame
	// order holds datagrams behind missing sources (fec_order.go).
	order datagramOrder
	stats FECStats
}

func newFECReceiver(window, maxSymbol int) (*fecReceiver, error) {
	dec, err := fec.NewDecoder(fec.DecoderConfig{MaxWindow: window, MaxSymbolSize: maxSymbol})
	if err != nil {
		return nil, err
	}
	return &fecReceiver{dec: dec, order: datagramOrder{window: uint64(window)}}, nil
}

// sourceID returns the sequence number of a FEC_SOURCE_ID frame at the
// start of payload, after any PADDING (fec_pad.go), and where the source
// symbol starts: right after the frame.
func sourceID(payload []byte) (uint64, int, bool) {
	pad := 0
	for pad < len(payload) && payload[pad] == byte(wire.FrameTypePadding) {
		pad++
	}
	t, n, err := wire.ParseVarint(payload[pad:])
	if err != nil || wire.FrameType(t) != wire.FrameTypeFECSourceID || n != 2 {
		return 0, 0, false
	}
	seq, m, err := wire.ParseVarint(payload[pad+n:])
	if err != nil {
		return 0, 0, false
	}
	return seq, pad + n + m, true
}

// onSource gives the decoder the source symbol of a received packet.
func (r *fecReceiver) onSource(seq uint64, symbol []byte) {
	if !r.seen || seq > r.highest {
		r.highest, r.seen = seq, true
	}
	r.keep(r.dec.AddSource(uint32(seq), symbol))
}

// onRepair gives the decoder a repair symbol. A repair the decoder refuses
// (malformed, or inconsistent with what it holds) is counted and dropped:
// it cannot be trusted, but the packet that carried it was authenticated
// and its other frames stand.
func (r *fecReceiver) onRepair(data []byte) {
	r.stats.RepairsReceived++
	recs, err := r.dec.AddRepair(data)
	if err != nil {
		r.stats.RepairsRejected++
		return
	}
	r.keep(recs)
}

// keep copies rebuilt symbols for processing and notes them for the
// report.
func (r *fecReceiver) keep(recs []fec.Recovered) {
	for _, rec := range recs {
		seq := r.extend(rec.ESI)
		r.recovered.add(seq, seq+1)
		for r.recovered.count() > fecMaxReportRanges {
			r.recovered.dropLowest()
		}
		r.reportDue = true
		r.stats.SymbolsRecovered++
		var buf []byte
		if n := len(r.spare); n > 0 {
			buf, r.spare = r.spare[n-1][:0], r.spare[:n-1]
		}
		r.pending = append(r.pending, append(buf, rec.Data...))
		r.pendingSeq = append(r.pendingSeq, seq)
	}
}

// extend maps a 32-bit ESI to the sequence number nearest to the highest
// seen.
func (r *fecReceiver) extend(esi uint32) uint64 {
	return uint64(int64(r.highest) + int64(int32(esi-uint32(r.highest))))
}

// buildReport fills the FEC_RECOVERED frame with the recovered sequence
// numbers the peer has not acknowledged, newest first.
func (r *fecReceiver) buildReport() (*wire.FECRecoveredFrame, bool) {
	f := &r.report
	f.Ranges = f.Ranges[:0]
	for i := r.recovered.count() - 1; i >= 0; i-- {
		sp := r.recovered.s[i]
		if r.hasKnown && sp.hi-1 <= r.peerKnows {
			break
		}
		f.Ranges = append(f.Ranges, wire.AckRange{Smallest: sp.lo, Largest: sp.hi - 1})
	}
	return f, len(f.Ranges) > 0
}

// onReportAcked records that the peer received a FEC_RECOVERED frame
// whose largest sequence number was largest.
func (r *fecReceiver) onReportAcked(largest uint64) {
	if !r.hasKnown || largest > r.peerKnows {
		r.peerKnows, r.hasKnown = largest, true
	}
	r.recovered.removeBelow(r.peerKnows + 1)
}

// onPacket gives the decoder the source symbol of a processed 1-RTT packet
// that carries one. It returns the payloads of the packets rebuilt from it
// and from the repairs the packet carried, which the frame loop processes
// (receive_frames.go); they stay valid until recycle.
func (r *fecReceiver) onPacket(payload []byte) [][]byte {
	if seq, n, ok := sourceID(payload); ok {
		r.onSource(seq, payload[n:])
	}
	return r.pending
}

// recycle empties pending once its symbols were processed, and gives
// every buffer back to spare. It keeps pending's capacity (reslicing from
// the front would shrink it to nothing and make every recovery allocate a
// new one).
func (r *fecReceiver) recycle() {
	r.spare = append(r.spare, r.pending...)
	clear(r.pending)
	r.pending = r.pending[:0]
	r.pendingSeq = r.pendingSeq[:0]
}
