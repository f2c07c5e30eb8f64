package quic

import (
	"time"

	"github.com/satquic/satquic/quic/internal/core"
)

// FEC policies for FECConfig.Policy: whether a packet the peer rebuilt
// with FEC, and so never received, counts as congestion.
const (
	// FECAuto counts it as a loss only where the path shows congestion
	// around it, and as delivered otherwise: the round trips measured
	// near it exceed the minimum by half the minimum RTT (at least 5 ms)
	// of queueing delay, an ECN-CE mark came within a round trip, or the
	// losses of the last two round trips include at least two FEC did not
	// rebuild, a quarter of them or more. A random-loss path (satellite,
	// in-flight Wi-Fi) runs as under FECHide, a path whose losses are its
	// own queue overflowing as under FECSignal, with no choice by hand.
	// The default.
	FECAuto = "auto"
	// FECSignal counts it as a loss for congestion control (RFC 9265's
	// recommendation for paths whose losses may be congestion); its data
	// is still never retransmitted.
	FECSignal = "signal"
	// FECHide counts it as delivered: for paths known to lose packets
	// without congestion (LEO and GEO satellites, in-flight Wi-Fi). A
	// lost repair packet is no congestion signal either (nor under
	// FECAuto), and a packet declared lost before its rebuild was
	// reported signals only if the report does not come within a PTO
	// period (under FECAuto, also if the report finds the path
	// congested). On a path whose losses are its own queue overflowing,
	// this delays or removes the response to them: in the p2p profile
	// (25-packet queue, no random loss), 10 MB takes 9.5 s with FEC under
	// hide, 8.5 s under signal, 8.3 s without FEC.
	FECHide = "hide"
)

// FEC redundancy controllers for FECConfig.Controller.
const (
	// FECAdaptive follows the loss rate and burst lengths the sender
	// measures from ACKs, with proactive repairs and repairs aimed at
	// what the peer still misses. The default.
	FECAdaptive = "adaptive"
	// FECFixed sends FixedRepairs repairs every FixedSources packets.
	FECFixed = "fixed"
)

// FECConfig enables forward erasure correction inside the connection.
// Packets that carry stream data become source symbols of the RFC 8681
// sliding-window code; repair symbols travel in encrypted packets of their
// own, congestion controlled and paced. The receiver rebuilds a lost
// packet as soon as a repair allows, and tells the sender, which never
// retransmits it; loss detection waits for the repairs that cover a
// packet before it declares it lost. Both endpoints must enable it (a
// transport parameter offers it); with a peer that does not, the
// connection runs without FEC. Zero fields take their defaults.
type FECConfig struct {
	// MaxWindow bounds the packets one repair covers and is the window
	// this endpoint decodes (default 1024, at most 4095).
	MaxWindow int
	// Controller is FECAdaptive (default) or FECFixed.
	Controller string
	// FixedSources and FixedRepairs are the fixed controller's code
	// rate (default 20 and 1).
	FixedSources, FixedRepairs int
	// MaxOverhead caps the repair data sent as a share of the source
	// data sent, in bytes (FECStats.RepairBytesSent over
	// SourceBytesSent), every repair included, tail protection's too; over
	// any stretch of the connection within a few full repairs saved up
	// (default 0.25).
	MaxOverhead float64
	// Policy is FECAuto (default), FECSignal or FECHide.
	Policy string
	// DisableTailProtection stops the repairs sent when the application
	// has nothing more to send, which otherwise spare the last packets
	// of a response a probe timeout.
	DisableTailProtection bool
	// DisableDatagramOrder stops holding the DATAGRAM frames that arrive
	// behind a lost packet until FEC rebuilds it, which otherwise
	// delivers datagrams in the order they were sent, the rebuilt ones
	// in their place (at most DatagramHold late), so that a tunnelled
	// TCP does not take each repaired loss for reordering.
	DisableDatagramOrder bool
	// DatagramHold bounds that wait (default: the smoothed RTT plus four
	// times its variation, at least 1 ms).
	DatagramHold time.Duration
}

// FECStats are a connection's FEC counters.
type FECStats struct {
	// Enabled: both endpoints offered FEC, and this one protects what it
	// sends.
	Enabled bool
	// SourcesSent counts packets sent as source symbols and
	// SourceBytesSent their symbols' bytes (the packets' payloads after
	// the FEC_SOURCE_ID frame), RepairsSent the repair packets,
	// RepairBytesSent their repair data, RepairsCapped the repairs
	// MaxOverhead held back. RepairBytesSent/SourceBytesSent is the FEC
	// overhead MaxOverhead bounds.
	SourcesSent, SourceBytesSent, RepairsSent, RepairBytesSent, RepairsCapped uint64
	// RepairsShed counts repairs dropped because the sender could not
	// keep up: its DATAGRAM send queue overflowed while the congestion
	// window was open. The redundancy gives way before the data does.
	RepairsShed uint64
	// LossRepairsSent counts the repairs sent because loss detection
	// declared lost packets whose content is not sent again (DATAGRAM
	// frames), RepairProbesSent the repairs sent as probe timeout probes
	// over them; both are among RepairsSent, and proportional to the
	// loss. LostSourcesGivenUp counts such packets left unrepaired (out
	// of the peer's decoding window, or more than the overhead allowance
	// could repair).
	LossRepairsSent, RepairProbesSent, LostSourcesGivenUp uint64
	// OverdueSources counts such packets that waited for repairs because
	// a probe timeout passed since they were sent with no acknowledgement
	// of them, while the probe timeout itself had moved on with the
	// packets sent after them.
	OverdueSources uint64
	// PacketsRecoveredByPeer counts packets of ours the peer rebuilt
	// (never retransmitted, unless their loss had been declared first).
	PacketsRecoveredByPeer uint64
	// RecoveredByPeerAsCongestion counts those among them, rebuilt
	// before their loss was declared, that the policy counted as
	// congestion: all under FECSignal, none under FECHide, and under
	// FECAuto those rebuilt while the path showed congestion.
	RecoveredByPeerAsCongestion uint64
	// RepairsReceived counts repairs received, RepairsRejected those the
	// decoder refused, PacketsRecovered the peer's packets rebuilt here.
	RepairsReceived, RepairsRejected, PacketsRecovered uint64
	// DatagramsHeld counts the DATAGRAM frames held behind a lost packet
	// until it was rebuilt or given up, HeldPacketsGivenUp the lost
	// packets they stopped waiting for.
	DatagramsHeld, HeldPacketsGivenUp uint64
}

func fecStats(s *core.Stats) FECStats {
	f := s.FEC
	return FECStats{
		Enabled:                     f.Enabled,
		SourcesSent:                 f.SourcesSent,
		SourceBytesSent:             f.SourceBytesSent,
		RepairsSent:                 f.RepairsSent,
		RepairBytesSent:             f.RepairBytesSent,
		RepairsCapped:               f.RepairsCapped,
		RepairsShed:                 f.RepairsShed,
		LossRepairsSent:             f.LossRepairsSent,
		RepairProbesSent:            f.RepairProbesSent,
		LostSourcesGivenUp:          f.LostSourcesGivenUp,
		OverdueSources:              f.OverdueSources,
		PacketsRecoveredByPeer:      s.Recovery.PacketsRecovered,
		RecoveredByPeerAsCongestion: s.Recovery.RecoveredAsCongestion,
		RepairsReceived:             f.RepairsReceived,
		RepairsRejected:             f.RepairsRejected,
		PacketsRecovered:            f.SymbolsRecovered,
		DatagramsHeld:               f.DatagramsHeld,
		HeldPacketsGivenUp:          f.HeldSourcesGivenUp,
	}
}
