package core

import (
	"fmt"

	"github.com/satquic/satquic/fec"
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
// encoder of what this endpoint sends.
type fecState struct {
	cfg    FECConfig
	send   *fecSender
	recv   *fecReceiver
	parser wire.FECFrameParser
}

// initFEC validates Config.FEC and prepares the receiving half; nil turns
// FEC off.
func (c *Conn) initFEC() error {
	if c.cfg.FEC == nil {
		return nil
	}
	cfg, err := c.cfg.FEC.withDefaults()
	if err != nil {
		return err
	}
	recv, err := newFECReceiver(cfg.MaxWindow, min(c.cfg.largestDatagram(), fec.MaxSymbolSize))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	c.fec = &fecState{cfg: cfg, recv: recv}
	c.parser.Extension = c.fec.parser.Parse
	return nil
}

// fecMaxSendSymbol is the largest source symbol this endpoint sends: a
// 1-RTT payload of the largest datagram it may send, path MTU discovery
// included, within the peer's max_udp_payload_size. The sender's repair
// costs are shares of it, so it must not be the receive size (9000 bytes
// in the quic package), which would make a full repair look small.
func (c *Conn) fecMaxSendSymbol(p *wire.TransportParameters) int {
	return int(min(uint64(c.cfg.largestSend()), p.MaxUDPPayloadSize, fec.MaxSymbolSize))
}

// addFECParam offers FEC in the transport parameters.
func (c *Conn) addFECParam(p *wire.TransportParameters) {
	if c.fec == nil {
		return
	}
	if p.Extensions == nil {
		p.Extensions = make(map[uint64][]byte)
	}
	p.Extensions[wire.ParamFEC] = c.fec.cfg.localParam()
}

// startFECSender starts protecting what this endpoint sends if the peer
// offered to decode the RLC scheme. A malformed offer is a
// TRANSPORT_PARAMETER_ERROR; an unknown scheme is ignored.
func (c *Conn) startFECSender(p *wire.TransportParameters) error {
	raw, ok := p.Extensions[wire.ParamFEC]
	if c.fec == nil || !ok || c.fec.send != nil {
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
	send, err := newFECSender(c.fec.cfg, window, c.fecMaxSendSymbol(p))
	if err != nil {
		return transportError(wire.CodeInternalError, 0, "starting FEC: %v", err)
	}
	c.fec.send = send
	return nil
}

// onFECFrame handles the FEC frames of a received packet.
func (c *Conn) onFECFrame(f wire.Frame, first bool) error {
	switch f := f.(type) {
	case *wire.FECSourceIDFrame:
		if !first {
			return transportError(wire.CodeProtocolViolation, f.Type(), "FEC_SOURCE_ID not the first frame")
		}
	case *wire.FECRepairFrame:
		c.fec.recv.onRepair(f.Data)
	case *wire.FECRecoveredFrame:
		return c.onFECRecovered(f)
	}
	return nil
}

// onFECRecovered hands the packets the peer rebuilt to loss recovery:
// delivered, never retransmitted.
func (c *Conn) onFECRecovered(f *wire.FECRecoveredFrame) error {
	fs := c.fec.send
	if fs == nil {
		return transportError(wire.CodeProtocolViolation, f.Type(), "FEC_RECOVERED without repairs sent")
	}
	ranges := fs.recoveredPackets(c.build.fecRanges[:0], f.Ranges)
	c.build.fecRanges = ranges
	if len(ranges) == 0 {
		return nil
	}
	res, err := c.sender.OnRecovered(c.now, spaceApp, ranges)
	if err != nil {
		return transportError(wire.CodeInternalError, f.Type(), "%v", err)
	}
	c.onRecoveryResult(res)
	return nil
}

// afterFECPacket gives the decoder the source symbol of a processed 1-RTT
// packet and handles what the decoder rebuilt meanwhile.
func (c *Conn) afterFECPacket(payload []byte, dcid wire.ConnectionID) error {
	if seq, n, ok := sourceID(payload); ok {
		c.fec.recv.onSource(seq, payload[n:])
	}
	if len(c.fec.recv.pending) == 0 {
		return nil
	}
	c.qlogSymbolsRecovered(len(c.fec.recv.pending))
	return c.processRecovered(dcid)
}

// fecStats merges both halves' counters.
func (c *Conn) fecStats() FECStats {
	if c.fec == nil {
		return FECStats{}
	}
	s := c.fec.recv.stats
	if fs := c.fec.send; fs != nil {
		s.Enabled = true
		s.SourcesSent, s.RepairsSent, s.RepairBytesSent, s.RepairsCapped =
			fs.stats.SourcesSent, fs.stats.RepairsSent, fs.stats.RepairBytesSent, fs.stats.RepairsCapped
	}
	return s
}
