package quic

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// ConnectionStats are a connection's path estimates and counters.
type ConnectionStats struct {
	// HandshakeDuration is how long the handshake took, from the start
	// of the connection (0 until it completed).
	HandshakeDuration time.Duration

	SmoothedRTT, MinRTT, LatestRTT, RTTVariance time.Duration
	// CongestionWindow and BytesInFlight are in bytes; PacingRate in
	// bytes per second.
	CongestionWindow int
	BytesInFlight    int64
	PacingRate       uint64
	// CongestionControl names the controller (cubic, newreno, bbr, or a
	// custom controller's congestion.State.Name) and CongestionState its
	// phase as qlog names it (slow_start, congestion_avoidance,
	// recovery..., or a custom controller's State.Phase, "failed" once it
	// panicked); BBRState is BBR's state
	// (startup, drain, probe_bw_down, probe_bw_cruise, probe_bw_refill,
	// probe_bw_up, probe_rtt), empty for the other controllers.
	CongestionControl, CongestionState, BBRState string

	// UDP datagrams and their payload bytes.
	DatagramsSent, DatagramsReceived uint64
	BytesSent, BytesReceived         uint64
	PacketsSent, PacketsReceived     uint64
	// PacketsLost counts packets declared lost, PacketsRetransmitted
	// those whose content was sent again, SpuriousLosses those
	// declared lost and acknowledged later.
	PacketsLost, PacketsRetransmitted, SpuriousLosses uint64
	// StreamBytesRetransmitted counts stream bytes sent more than once.
	StreamBytesRetransmitted uint64
	// StreamBytesUnacked is the stream data written and not yet
	// acknowledged by the peer (streams reset excepted): a server that
	// drains before closing waits for it to reach zero.
	StreamBytesUnacked uint64
	// PTOs counts probe timeouts; PacketsDropped the received packets
	// that could not be processed.
	PTOs, PacketsDropped uint64
	KeyUpdates           uint64
	// SpuriousRetransmissions counts packets whose content was sent again
	// although the peer had it (declared lost then acknowledged, or
	// rebuilt by the peer's FEC after the loss was declared).
	SpuriousRetransmissions uint64
	// FEC counts forward erasure correction work (Config.FEC).
	FEC FECStats
	// ECN is the state of ECN on the path and its counters.
	ECN ECNStats
	// MaxDatagramSize is the largest UDP payload sent now: it grows as
	// path MTU discovery finds the path carries more.
	MaxDatagramSize int
	// MTUProbesSent and MTUProbesLost count path MTU probes;
	// MTUBlackHole: large datagrams stopped arriving and the size fell
	// back to Config.MaxDatagramSize, from which path MTU discovery
	// searched again. MTUBlackHolesDismissed counts the suspected black
	// holes that a probe of the size in use showed were not (a full
	// receive buffer drops large datagrams and takes small ones).
	MTUProbesSent, MTUProbesLost uint64
	MTUBlackHole                 bool
	MTUBlackHolesDismissed       uint64
	// CarefulResume is the phase of Careful Resume and the BDP frames'
	// counters.
	CarefulResume CarefulResumeStats
	// Datagrams counts DATAGRAM frames (SendDatagram, ReceiveDatagram).
	Datagrams DatagramStats
	// AckFrequency reports the ACK frequency extension: whether the peer
	// offered it, what this endpoint asked it for, and what the peer
	// asked this endpoint for.
	AckFrequency AckFrequencyStats
	// Migration counts path changes and validations (RFC 9000 sections
	// 8.2 and 9).
	Migration MigrationStats
}

// AckFrequencyStats describe the ACK frequency extension on a connection
// (draft-ietf-quic-ack-frequency).
type AckFrequencyStats struct {
	// PeerOffered: the peer sent min_ack_delay, so this endpoint may ask
	// it for another ACK rate.
	PeerOffered bool
	// FramesSent and ImmediateAcksSent count this endpoint's
	// ACK_FREQUENCY and IMMEDIATE_ACK frames; PacketsPerAck and
	// MaxAckDelay are its last request (0 before the first).
	FramesSent, ImmediateAcksSent uint64
	PacketsPerAck                 int
	MaxAckDelay                   time.Duration
	// FramesReceived counts the peer's ACK_FREQUENCY frames;
	// PeerPacketsPerAck and PeerMaxAckDelay are the request in force.
	FramesReceived    uint64
	PeerPacketsPerAck int
	PeerMaxAckDelay   time.Duration
}

// ECNStats describe ECN on a connection's path (RFC 9000 section 13.4).
type ECNStats struct {
	// State is "disabled" (Config.DisableECN, or a socket without ECN),
	// "testing" (the first datagrams go out ECT(0)), "unknown" (waiting
	// for the peer's counts), "capable" (validated: datagrams are
	// marked and CE marks slow the sender) or "failed" (the path or the
	// peer cleared, dropped or miscounted marks: no more marking).
	State string
	// Failure says why validation failed.
	Failure string
	// PacketsMarked counts packets sent ECT(0).
	PacketsMarked uint64
	// CEReceived counts packets that arrived marked Congestion
	// Experienced, which this endpoint reported to the peer.
	CEReceived uint64
	// CEReported is the CE count the peer reported for what this
	// endpoint sent, and CongestionSignals how many of its increases
	// were congestion signals (at most one per ACK frame).
	CEReported, CongestionSignals uint64
}

// Stats returns the connection's statistics.
func (c *Conn) Stats() ConnectionStats {
	c.mu.Lock()
	s := c.core.Stats()
	hs := c.handshakeTime
	c.mu.Unlock()
	return ConnectionStats{
		HandshakeDuration:        hs,
		SmoothedRTT:              s.SmoothedRTT,
		MinRTT:                   s.MinRTT,
		LatestRTT:                s.LatestRTT,
		RTTVariance:              s.RTTVar,
		CongestionWindow:         s.CongestionWindow,
		BytesInFlight:            s.BytesInFlight,
		PacingRate:               s.PacingRate,
		CongestionControl:        s.Controller.AlgorithmName(),
		CongestionState:          s.Controller.PhaseName(),
		BBRState:                 bbrState(s.Controller.BBR.State),
		DatagramsSent:            s.DatagramsSent,
		DatagramsReceived:        s.DatagramsReceived,
		BytesSent:                s.BytesSent,
		BytesReceived:            s.BytesReceived,
		PacketsSent:              s.PacketsSent,
		PacketsReceived:          s.PacketsReceived,
		PacketsLost:              s.PacketsLost,
		PacketsRetransmitted:     s.PacketsRetransmitted,
		SpuriousLosses:           s.Recovery.SpuriousLosses,
		StreamBytesRetransmitted: s.StreamBytesRetransmitted,
		StreamBytesUnacked:       s.StreamBytesUnacked,
		PTOs:                     s.Recovery.PTOs,
		PacketsDropped:           s.PacketsDropped,
		KeyUpdates:               s.KeyUpdates,
		SpuriousRetransmissions:  s.SpuriousRetransmissions,
		FEC:                      fecStats(&s),
		ECN: ECNStats{
			State:             s.ECN.State.String(),
			Failure:           s.ECN.Failure,
			PacketsMarked:     s.ECN.PacketsMarked,
			CEReceived:        s.ECN.CEReceived,
			CEReported:        s.ECN.CEReported,
			CongestionSignals: s.Recovery.ECNCEIncreases,
		},
		MaxDatagramSize:        s.PathMTU.MaxDatagramSize,
		MTUProbesSent:          s.PathMTU.ProbesSent,
		MTUProbesLost:          s.PathMTU.ProbesLost,
		MTUBlackHole:           s.PathMTU.BlackHole,
		MTUBlackHolesDismissed: s.PathMTU.BlackHolesDismissed,
		CarefulResume:          carefulResumeStats(&s),
		Datagrams:              datagramStats(&s),
		AckFrequency: AckFrequencyStats{
			PeerOffered:       s.AckFrequency.PeerOffered,
			FramesSent:        s.AckFrequency.FramesSent,
			ImmediateAcksSent: s.AckFrequency.ImmediateAcksSent,
			PacketsPerAck:     s.AckFrequency.PacketsPerAck,
			MaxAckDelay:       s.AckFrequency.MaxAckDelay,
			FramesReceived:    s.AckFrequency.FramesReceived,
			PeerPacketsPerAck: s.AckFrequency.PeerPacketsPerAck,
			PeerMaxAckDelay:   s.AckFrequency.PeerMaxAckDelay,
		},
		Migration: MigrationStats(s.Path),
	}
}

// bbrState names BBR's state, or nothing for another controller.
func bbrState(s recovery.BBRState) string {
	if s == recovery.BBRNone {
		return ""
	}
	return s.String()
}
