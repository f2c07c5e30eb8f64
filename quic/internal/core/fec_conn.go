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
	// SourcesSent counts packets sent as source symbols and
	// SourceBytesSent their symbols' bytes; RepairsSent and
	// RepairBytesSent the repair packets and their FEC_REPAIR data;
	// RepairsCapped the repairs the controller asked for that MaxOverhead
	// held back.
	SourcesSent, SourceBytesSent, RepairsSent, RepairBytesSent, RepairsCapped uint64
	// RepairsShed counts repairs owed and dropped because the sender was
	// overloaded (fec_overload.go).
	RepairsShed uint64
	// LossRepairsSent counts the repairs sent because loss detection
	// declared lost sources whose content is not sent again (DATAGRAM
	// frames), RepairProbesSent the repairs sent as a probe timeout's
	// probes; both are among RepairsSent (fec_lossrepair.go).
	// LostSourcesGivenUp counts such sources left unrepaired: out of the
	// peer's window, or more than the overhead allowance could repair.
	// OverdueSources counts the sources that waited for repairs because
	// their acknowledgement was a probe timeout late
	// (fec_lossrepair_overdue.go).
	LossRepairsSent, RepairProbesSent, LostSourcesGivenUp, OverdueSources uint64
	// RepairsReceived counts FEC_REPAIR frames received, RepairsRejected
	// those the decoder refused, SymbolsRecovered the lost packets the
	// decoder rebuilt.
	RepairsReceived, RepairsRejected, SymbolsRecovered uint64
	// DatagramsHeld counts the DATAGRAM frames held behind a missing
	// source packet to be delivered in order, HeldSourcesGivenUp the
	// missing sources they stopped waiting for (fec_order.go).
	DatagramsHeld, HeldSourcesGivenUp uint64
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
// for datagrams up to largestDatagram bytes; a nil cfg turns FEC off. The
// connection's frame parser reads FEC frames with its parser
// (Conn.parseExtension).
func newFECState(cfg *FECConfig, largestDatagram int) (*fecState, error) {
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
	return &fecState{cfg: valid, recv: recv}, nil
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
	if !f.cfg.notPadded {
		p.Extensions[wire.ParamFECPaddedSources] = []byte{}
	}
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
	padded, err := peerTakesPaddedSources(p)
	if err != nil {
		return err
	}
	send, err := newFECSender(f.cfg, window, maxSymbol)
	if err != nil {
		return transportError(wire.CodeInternalError, 0, "starting FEC: %v", err)
	}
	send.padSources = padded
	f.send = send
	return nil
}

// repairOwed reports whether repairs wait to be sent (f may be nil).
func (f *fecState) repairOwed() bool {
	return f != nil && f.send != nil && f.send.owed > 0
}

// onFECFrame handles a FEC frame of a packet received at now (first: the
// packet's first frame); the packets the peer reports rebuilt go to loss
// recovery, delivered, never retransmitted.
func (c *Conn) onFECFrame(now time.Duration, f wire.Frame, first bool) error {
	if sid, ok := f.(*wire.FECSourceIDFrame); ok && first {
		c.onSourceOrder(now, sid.Seq)
	}
	ranges, err := c.fec.onFrame(f, first, c.scratch().fecRanges[:0])
	c.scratch().fecRanges = ranges
	if err != nil || len(ranges) == 0 {
		return err
	}
	res, err := c.sender.OnRecovered(now, spaceApp, ranges)
	if err != nil {
		return transportError(wire.CodeInternalError, f.Type(), "%v", err)
	}
	c.onRecoveryResult(now, res)
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
	s.DatagramsHeld, s.HeldSourcesGivenUp = f.recv.order.reordered, f.recv.order.givenUp
	if fs := f.send; fs != nil {
		s.Enabled = true
		s.SourcesSent, s.SourceBytesSent, s.RepairsSent, s.RepairBytesSent, s.RepairsCapped =
			fs.stats.SourcesSent, fs.stats.SourceBytesSent, fs.stats.RepairsSent, fs.stats.RepairBytesSent, fs.stats.RepairsCapped
		s.RepairsShed = fs.stats.RepairsShed
		s.LossRepairsSent, s.RepairProbesSent, s.LostSourcesGivenUp = fs.stats.LossRepairsSent, fs.stats.RepairProbesSent, fs.stats.LostSourcesGivenUp
		s.OverdueSources = fs.stats.OverdueSources
	}
	return s
}

// peerTakesPaddedSources reports whether the peer's parameters p offer to
// take PADDING before FEC_SOURCE_ID (fec_pad.go); a malformed offer is a
// TRANSPORT_PARAMETER_ERROR.
func peerTakesPaddedSources(p *wire.TransportParameters) (bool, error) {
	v, ok := p.Extensions[wire.ParamFECPaddedSources]
	if !ok {
		return false, nil
	}
	return true, wire.CheckFECPaddedSourcesParam(v)
}
