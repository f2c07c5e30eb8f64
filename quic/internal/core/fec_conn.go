package core

import (
	"fmt"
	"time"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// FECStats counts a connection's FEC work. Sending and receiving are
// independent: each direction is protected when its receiver offered FEC.
type FECStats struct {
	// Enabled reports that this endpoint sends repairs (the peer offered
	// FEC too).
	Enabled bool
	// SourcesSent counts packets sent as source symbols; RepairsSent and
	// RepairBytesSent the repair packets and their FEC_REPAIR data;
	// RepairsCapped the repairs the controller asked for that MaxOverhead
	// held back.
	SourcesSent, RepairsSent, RepairBytesSent, RepairsCapped uint64
	// RepairsReceived counts FEC_REPAIR frames received, RepairsRejected
	// those the decoder refused, SymbolsRecovered the lost packets the
	// decoder rebuilt.
	RepairsReceived, RepairsRejected, SymbolsRecovered uint64
}

// fecState is a connection's FEC: its validated configuration, the
// decoder of what the peer protects, and, once the peer offered FEC, the
// encoder of what this endpoint sends. A connection without FEC has a nil
// *fecState, whose methods report nothing to do.
type fecState struct {
	cfg    FECConfig
	send   *fecSender
	recv   *fecReceiver
	parser wire.FECFrameParser
}

// newFECState validates cfg (Config.FEC) and prepares the receiving half,
// for datagrams up to largestDatagram bytes, and makes parser read FEC
// frames; a nil cfg turns FEC off.
func newFECState(cfg *FECConfig, largestDatagram int, parser *wire.FrameParser) (*fecState, error) {
	if cfg == nil {
		return nil, nil
	}
	valid, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	recv, err := newFECReceiver(valid.MaxWindow, min(largestDatagram, fec.MaxSymbolSize))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	f := &fecState{cfg: valid, recv: recv}
	parser.Extension = f.parser.Parse
	return f, nil
}

// addParam offers FEC in the transport parameters.
func (f *fecState) addParam(p *wire.TransportParameters) {
	if f == nil {
		return
	}
	if p.Extensions == nil {
		p.Extensions = make(map[uint64][]byte)
	}
	p.Extensions[wire.ParamFEC] = f.cfg.localParam()
}

// startSender starts protecting what this endpoint sends if the peer's
// transport parameters p offer to decode the RLC scheme. A malformed offer
// is a TRANSPORT_PARAMETER_ERROR; an unknown scheme is ignored.
//
// The largest source symbol is a 1-RTT payload of the largest datagram
// this endpoint may send (largestSend, path MTU discovery included),
// within the peer's max_udp_payload_size. The sender's repair costs are
// shares of it, so it must not be the receive size (9000 bytes in the
// quic package), which would make a full repair look small.
func (f *fecState) startSender(p *wire.TransportParameters, largestSend int) error {
	if f == nil || f.send != nil {
		return nil
	}
	raw, ok := p.Extensions[wire.ParamFEC]
	if !ok {
		return nil
	}
	offer, err := wire.ParseFECParams(raw)
	if err != nil {
		return err
	}
	if offer.Scheme != wire.FECSchemeRLC {
		return nil
	}
	window := int(min(offer.MaxWindow, fec.MaxNSS))
	maxSymbol := int(min(uint64(largestSend), p.MaxUDPPayloadSize, fec.MaxSymbolSize))
	send, err := newFECSender(f.cfg, window, maxSymbol)
	if err != nil {
		return transportError(wire.CodeInternalError, 0, "starting FEC: %v", err)
	}
	f.send = send
	return nil
}

// sending reports whether packets of space s built now are protected
// (early: a 0-RTT packet, never).
func (f *fecState) sending(s recovery.Space, early bool) bool {
	return f != nil && f.send != nil && s == spaceApp && !early
}

// appendRepair fills a 1-RTT packet with the next owed repair, after an
// ACK frame if one is due and fits. It reports false when no repair is
// owed or it does not fit, leaving b as it was.
func (c *Conn) appendRepair(now time.Duration, sp *pnSpace, b []byte, frames []sentFrame, avail int, wantAck bool) ([]byte, []sentFrame, bool, bool) {
	fs := c.fec.send
	data, id, ok := fs.nextRepair()
	if !ok {
		return b, frames, false, false
	}
	f := wire.FECRepairFrame{Data: data}
	need := f.Len()
	if need > avail {
		// A source grew past the reserve (a longer packet number):
		// this repair cannot be sent, the next one covers the same.
		fs.owed--
		return b, frames, false, false
	}
	hasAck := false
	if wantAck {
		b, frames, hasAck = c.appendAck(sp, b, frames, avail-need, now)
	}
	// FEC_REPAIR runs to the end of the packet: a report goes before it.
	b, frames = c.appendRecoveredReport(b, frames, avail-need, hasAck)
	b, _ = f.Append(b)
	frames = append(frames, sentFrame{kind: fkFECRepair, id: uint64(id.FirstESI), n: uint64(id.NSS)})
	fs.onRepairSent(sp.nextPN, id, len(data))
	rtt := c.sender.RTT()
	until := now + rtt.SmoothedRTT() + max(4*rtt.RTTVar(), time.Millisecond) + c.peerParams.MaxAckDelay()
	fs.coverWindow(c.sender, id, until)
	c.qlogRepairSent(id)
	return b, frames, hasAck, true
}

// markSource makes a 1-RTT payload built within the reserve a source
// symbol: it moves the frames to make room for FEC_SOURCE_ID in front.
func (c *Conn) markSource(b []byte, frames []sentFrame) ([]byte, []sentFrame) {
	seq := c.fec.send.nextSeq()
	id := wire.FECSourceIDFrame{Seq: seq}
	n := id.Len()
	if n > fecMaxSourceIDLen {
		return b, frames // sequence numbers beyond 2^30: sent unprotected
	}
	b = append(b, zeros[:n]...)
	copy(b[n:], b[:len(b)-n])
	if _, err := id.Append(b[:0]); err != nil {
		return b[n:], frames
	}
	return b, append(frames, sentFrame{kind: fkFECSourceID, id: seq})
}

// onFECSourceSent gives the encoder the symbol of a sent source packet.
func (c *Conn) onFECSourceSent(pn uint64, payload []byte) {
	_, n, ok := sourceID(payload)
	if !ok {
		return
	}
	if err := c.fec.send.onSourceSent(pn, payload[n:]); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "FEC source: %v", err))
		return
	}
	if !c.hasAppData() {
		c.fec.send.protectTail()
	}
}

// appendRecoveredReport appends FEC_RECOVERED when the decoder rebuilt
// symbols the peer has not heard of: right after a recovery, and with
// every ACK frame until the peer acknowledges a report.
func (c *Conn) appendRecoveredReport(b []byte, frames []sentFrame, avail int, withAck bool) ([]byte, []sentFrame) {
	r := c.fec.recv
	if !r.reportDue && !withAck {
		return b, frames
	}
	f, ok := r.buildReport()
	if !ok {
		r.reportDue = false
		return b, frames
	}
	for len(f.Ranges) > 1 && len(b)+f.Len() > avail {
		f.Ranges = f.Ranges[:len(f.Ranges)-1]
	}
	out, ok := c.fits(b, avail, f)
	if !ok {
		return b, frames
	}
	r.reportDue = false
	return out, append(frames, sentFrame{kind: fkFECRecovered, id: f.Ranges[0].Largest})
}

// onFECFrame handles a FEC frame of a packet received at now (first: the
// packet's first frame); the packets the peer reports rebuilt go to loss
// recovery, delivered, never retransmitted.
func (c *Conn) onFECFrame(now time.Duration, f wire.Frame, first bool) error {
	ranges, err := c.fec.onFrame(f, first, c.build.fecRanges[:0])
	c.build.fecRanges = ranges
	if err != nil || len(ranges) == 0 {
		return err
	}
	res, err := c.sender.OnRecovered(now, spaceApp, ranges)
	if err != nil {
		return transportError(wire.CodeInternalError, f.Type(), "%v", err)
	}
	c.onRecoveryResult(c.now, res)
	return nil
}

// onFrame handles a FEC frame of a received packet (first: the packet's
// first frame): FEC_SOURCE_ID must come first, a repair goes to the
// decoder, and a FEC_RECOVERED frame's sequence numbers become the ranges
// of this endpoint's packets the peer rebuilt, appended to dst.
func (f *fecState) onFrame(fr wire.Frame, first bool, dst []wire.AckRange) ([]wire.AckRange, error) {
	switch fr := fr.(type) {
	case *wire.FECSourceIDFrame:
		if !first {
			return dst, transportError(wire.CodeProtocolViolation, fr.Type(), "FEC_SOURCE_ID not the first frame")
		}
	case *wire.FECRepairFrame:
		f.recv.onRepair(fr.Data)
	case *wire.FECRecoveredFrame:
		if f.send == nil {
			return dst, transportError(wire.CodeProtocolViolation, fr.Type(), "FEC_RECOVERED without repairs sent")
		}
		return f.send.recoveredPackets(dst, fr.Ranges), nil
	}
	return dst, nil
}

// onRecoveryResult gives the sending half what loss recovery reports of
// its packets: the redundancy controller and the tail protection react to
// acknowledgements and losses (fec_send.go, fec_tail.go).
func (f *fecState) onRecoveryResult(res *recovery.Result) {
	if f != nil && f.send != nil {
		f.send.onResult(res)
	}
}

// stats merges both halves' counters.
func (f *fecState) stats() FECStats {
	if f == nil {
		return FECStats{}
	}
	s := f.recv.stats
	if fs := f.send; fs != nil {
		s.Enabled = true
		s.SourcesSent, s.RepairsSent, s.RepairBytesSent, s.RepairsCapped =
			fs.stats.SourcesSent, fs.stats.RepairsSent, fs.stats.RepairBytesSent, fs.stats.RepairsCapped
	}
	return s
}

// fecAvail is the payload budget of a packet that may become a source
// symbol.
func fecAvail(avail int) int { return avail - fecReserve }

// reportDue reports whether an ACK should go out in space s to carry a
// FEC_RECOVERED frame right after a recovery.
func (f *fecState) reportDue(s recovery.Space) bool {
	return f != nil && s == spaceApp && f.recv.reportDue
}

// carriesRepair reports whether a packet's frames include a FEC_REPAIR: a
// repair packet, whose loss the FECHide policy does not take for
// congestion (recovery's fec_hide.go).
func carriesRepair(frames []sentFrame) bool {
	for i := range frames {
		if frames[i].kind == fkFECRepair {
			return true
		}
	}
	return false
}
