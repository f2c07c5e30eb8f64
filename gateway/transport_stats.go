package gateway

import (
	"context"
	"time"

	"github.com/satquic/satquic/quic"
)

// TransportStats are what a tunnel's QUIC connections report of their
// path and their FEC, summed over the connections (the RTT is the
// largest). They marshal to JSON as they are.
type TransportStats struct {
	// SmoothedRTT is the RTT estimate (RFC 9002 section 5.3).
	SmoothedRTT time.Duration `json:"smoothed_rtt_ns"`
	// PacketsSent and PacketsLost count QUIC packets; the loss rate is
	// their ratio.
	PacketsSent uint64 `json:"packets_sent"`
	PacketsLost uint64 `json:"packets_lost"`
	// RepairsSent counts FEC repair packets sent, RepairsCapped those the
	// overhead cap held back; RecoveredByPeer the packets of this end the
	// peer rebuilt from them, Recovered the peer's packets rebuilt here.
	RepairsSent   uint64 `json:"fec_repairs_sent"`
	RepairsCapped uint64 `json:"fec_repairs_capped"`
	// RepairBytesSent and SourceBytesSent are the bytes of the repair
	// and source symbols sent: their ratio is the FEC overhead that
	// quic.FECConfig.MaxOverhead bounds.
	RepairBytesSent uint64 `json:"fec_repair_bytes_sent"`
	SourceBytesSent uint64 `json:"fec_source_bytes_sent"`
	// RepairsShed counts repairs the overload guard dropped: the sender
	// could not keep up, and the redundancy gave way first.
	RepairsShed uint64 `json:"fec_repairs_shed"`
	// LossRepairsSent counts the repairs among RepairsSent sent when IP
	// packets were declared lost, or as probes over them.
	LossRepairsSent uint64 `json:"fec_loss_repairs_sent"`
	// OverdueSources counts the IP packets that waited for repairs when
	// a probe timeout passed unacknowledged since they were sent
	// (quic.FECStats).
	OverdueSources  uint64 `json:"fec_overdue_sources"`
	RecoveredByPeer uint64 `json:"fec_recovered_by_peer"`
	Recovered       uint64 `json:"fec_recovered"`
	// DatagramsHeld counts the peer's IP packets held behind a missing
	// one until it was rebuilt or given up, HeldPacketsGivenUp the
	// missing packets given up, after which an inner TCP sees the gap
	// (quic.FECStats).
	DatagramsHeld      uint64 `json:"fec_datagrams_held"`
	HeldPacketsGivenUp uint64 `json:"fec_held_packets_given_up"`
	// DatagramsDropped counts IP packets the QUIC connection dropped
	// from its send queue (the path could not take them as fast) or its
	// receive queue (the tunnel could not read them as fast).
	DatagramsDropped uint64 `json:"datagrams_dropped"`
	// HTTPDatagramsDropped counts HTTP datagrams HTTP/3 dropped on
	// receipt: its queue of the tunnel's stream was full, or no stream
	// had their Quarter Stream ID (RFC 9297 section 2.1).
	HTTPDatagramsDropped uint64 `json:"http_datagrams_dropped"`
}

// add adds the counters of one connection.
func (t *TransportStats) add(s quic.ConnectionStats) {
	t.SmoothedRTT = max(t.SmoothedRTT, s.SmoothedRTT)
	t.PacketsSent += s.PacketsSent
	t.PacketsLost += s.PacketsLost
	t.RepairsSent += s.FEC.RepairsSent
	t.RepairsCapped += s.FEC.RepairsCapped
	t.RepairBytesSent += s.FEC.RepairBytesSent
	t.SourceBytesSent += s.FEC.SourceBytesSent
	t.RepairsShed += s.FEC.RepairsShed
	t.LossRepairsSent += s.FEC.LossRepairsSent + s.FEC.RepairProbesSent
	t.OverdueSources += s.FEC.OverdueSources
	t.RecoveredByPeer += s.FEC.PacketsRecoveredByPeer
	t.Recovered += s.FEC.PacketsRecovered
	t.DatagramsHeld += s.FEC.DatagramsHeld
	t.HeldPacketsGivenUp += s.FEC.HeldPacketsGivenUp
	t.DatagramsDropped += s.Datagrams.SendDropped + s.Datagrams.ReceiveDropped
}

// LossRate is the share of QUIC packets declared lost.
func (t TransportStats) LossRate() float64 {
	if t.PacketsSent == 0 {
		return 0
	}
	return float64(t.PacketsLost) / float64(t.PacketsSent)
}

// FECOverhead is the repair bytes sent as a share of the source bytes
// sent, what quic.FECConfig.MaxOverhead bounds (0 before any source).
func (t TransportStats) FECOverhead() float64 {
	if t.SourceBytesSent == 0 {
		return 0
	}
	return float64(t.RepairBytesSent) / float64(t.SourceBytesSent)
}

// TransportStats returns the QUIC connection's path and FEC counters.
func (ct *ClientTunnel) TransportStats() TransportStats {
	var t TransportStats
	t.add(ct.conn.Stats())
	unknown, full := ct.tr.DroppedDatagrams()
	t.HTTPDatagramsDropped = unknown + full
	return t
}

// connKey is the request context's key of its QUIC connection.
type connKey struct{}

// withConn is the http3.Server's ConnContext: it puts the connection in
// its requests' contexts, so that the server reads its counters.
func withConn(ctx context.Context, c *quic.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connOf is the connection of a request's context, or nil.
func connOf(ctx context.Context) *quic.Conn {
	c, _ := ctx.Value(connKey{}).(*quic.Conn)
	return c
}
