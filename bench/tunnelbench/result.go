//go:build linux

package tunnelbench

import (
	"slices"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/quic"
)

// The link a result was measured on.
const (
	LinkLossy    = "lossy"
	LinkLossless = "lossless"
)

// Result is one stack's requests of one size over one link.
type Result struct {
	Stack     string `json:"stack"`
	Link      string `json:"link"` // LinkLossy, or LinkLossless for the reference run
	SizeBytes int64  `json:"size_bytes"`
	Requests  int    `json:"requests"`
	Failed    int    `json:"failed"`
	// P25S and P75S bound the middle half of the completion times:
	// the median's spread, where a change of the median alone may be
	// the noise of a run.
	P25S  float64 `json:"p25_s"`
	P50S  float64 `json:"p50_s"`
	P75S  float64 `json:"p75_s"`
	P99S  float64 `json:"p99_s"`
	P999S float64 `json:"p999_s"`
	MaxS  float64 `json:"max_s"`
	// WarmUpBytes is the response the tunnel carried before the first
	// request was timed (Config.WarmUp); zero for direct.
	WarmUpBytes int64 `json:"warm_up_bytes"`
	// ExcessP99S is the p99 beyond the same stack's p99 over the
	// lossless link, when that was run (Config.Lossless).
	ExcessP99S *float64 `json:"p99_excess_s,omitempty"`
	// Overhead is LinkBytes beyond the response bodies, as a fraction of
	// them.
	Overhead  float64 `json:"overhead"`
	LinkBytes int64   `json:"link_bytes"`
	// FECOverhead is the repair bytes both tunnel ends sent (their
	// connections' FECStats.RepairBytesSent) as a fraction of the
	// response bodies; zero for direct and tunnel-nofec.
	FECOverhead float64 `json:"fec_overhead"`
	// LinkDrops counts the packets the link model dropped (loss, outage,
	// full queue) during the requests; LatePackets those the emulator
	// delivered late (the machine, not the model).
	LinkDrops int64 `json:"link_drops"`
	// QueueDrops are those of LinkDrops the full queue took: the
	// senders (the tunnel's outer connection, or the direct TCP) sent
	// faster than the link drained, not the loss model.
	QueueDrops  int64        `json:"queue_drops"`
	LatePackets uint64       `json:"late_packets"`
	FEC         tunnelCounts `json:"fec"`
	// ClientTCP and ServerTCP are the inner TCP's loss recovery in the
	// client's and the server's namespace during the requests.
	ClientTCP InnerTCP `json:"client_tcp"`
	ServerTCP InnerTCP `json:"server_tcp"`
	// Slowest are the slowest requests (1%, at least 10), slowest first,
	// with the link's drops while each ran; TailCauses counts their
	// causes (SlowRequest.Cause).
	Slowest    []SlowRequest  `json:"slowest,omitempty"`
	TailCauses map[string]int `json:"tail_causes,omitempty"`
	TimesS     []float64      `json:"times_s"`
}

// tunnelCounts are the counters of the tunnel's client end: its
// connection's FEC and DATAGRAM frames, and its forwarder's drops.
type tunnelCounts struct {
	// RepairsReceived and Recovered: repairs of the downlink and the
	// server's packets they rebuilt; RepairsSent and RecoveredByPeer the
	// same for the uplink.
	RepairsReceived uint64 `json:"repairs_received"`
	Recovered       uint64 `json:"recovered"`
	RepairsSent     uint64 `json:"repairs_sent"`
	RecoveredByPeer uint64 `json:"recovered_by_peer"`
	// RepairBytesSent and SourceBytesSent are the client's repair and
	// source symbol bytes, ServerRepairBytesSent and
	// ServerSourceBytesSent the server end's (summed over its
	// connections).
	RepairBytesSent       uint64 `json:"repair_bytes_sent"`
	SourceBytesSent       uint64 `json:"source_bytes_sent"`
	ServerRepairBytesSent uint64 `json:"server_repair_bytes_sent"`
	ServerSourceBytesSent uint64 `json:"server_source_bytes_sent"`
	// PacketsLost are the client's packets its loss detection declared
	// lost, ServerPacketsLost the server end's.
	PacketsLost       uint64 `json:"packets_lost"`
	ServerPacketsLost uint64 `json:"server_packets_lost"`
	// LossRepairsSent, RepairProbesSent and LostSourcesGivenUp are the
	// client's repairs over IP packets declared lost, its probe timeout
	// probes sent as repairs, and the lost packets it left unrepaired
	// (quic.FECStats); ServerLossRepairsSent the server end's repairs of
	// both kinds.
	LossRepairsSent    uint64 `json:"loss_repairs_sent"`
	RepairProbesSent   uint64 `json:"repair_probes_sent"`
	LostSourcesGivenUp uint64 `json:"lost_sources_given_up"`
	// OverdueSources are the client's IP packets that waited for repairs
	// because no acknowledgement came a probe timeout after they were
	// sent (quic.FECStats.OverdueSources): an outage took them, or on a
	// lossless path ACKs came late. ServerOverdueSources are the server
	// end's.
	OverdueSources       uint64 `json:"overdue_sources"`
	ServerOverdueSources uint64 `json:"server_overdue_sources"`
	// SmoothedRTT and RTTVariance are the client's RTT estimate when the
	// counters were read, PeerMaxAckDelay the ACK delay it asked the
	// server end for (0: none asked): what the probe timeout is made of.
	SmoothedRTT           time.Duration `json:"srtt_ns"`
	RTTVariance           time.Duration `json:"rttvar_ns"`
	PeerMaxAckDelay       time.Duration `json:"requested_max_ack_delay_ns"`
	ServerLossRepairsSent uint64        `json:"server_loss_repairs_sent"`
	// DatagramsHeld are the server's datagrams the client end held
	// behind a missing packet until it was rebuilt or given up
	// (quic.FECStats.DatagramsHeld), HeldGivenUp the missing packets it
	// stopped waiting for: each lets the inner TCP see a gap, which it
	// answers with a retransmission. ServerDatagramsHeld and
	// ServerHeldGivenUp are the same at the server end, for the client's
	// datagrams.
	DatagramsHeld       uint64 `json:"datagrams_held"`
	HeldGivenUp         uint64 `json:"held_given_up"`
	ServerDatagramsHeld uint64 `json:"server_datagrams_held"`
	ServerHeldGivenUp   uint64 `json:"server_held_given_up"`
	// DatagramsLost were in packets declared lost; SendDropped were
	// dropped from the full send queue before they were sent;
	// ReceiveDropped arrived while the receive queue was full.
	DatagramsSent  uint64 `json:"datagrams_sent"`
	DatagramsLost  uint64 `json:"datagrams_lost"`
	SendDropped    uint64 `json:"datagrams_send_dropped"`
	ReceiveDropped uint64 `json:"datagrams_receive_dropped"`
	// OverloadDrops are the client forwarder's packets dropped from its
	// full device queue (tunnel.Stats.OverloadDrops).
	OverloadDrops uint64 `json:"overload_drops"`
	// CPUSeconds is the client end process's CPU time so far, user and
	// system.
	CPUSeconds float64 `json:"cpu_s"`
	// PathTooSmall counts the client's packets dropped because their
	// datagram no longer fit the QUIC path; MaxDatagramSize and
	// MTUBlackHole are the path's size now and whether black hole
	// detection lowered it.
	PathTooSmall    uint64 `json:"path_too_small"`
	MaxDatagramSize int    `json:"max_datagram_size"`
	MTUBlackHole    bool   `json:"mtu_black_hole"`
}

func countsOf(s quic.ConnectionStats) tunnelCounts {
	return tunnelCounts{
		RepairsReceived: s.FEC.RepairsReceived, Recovered: s.FEC.PacketsRecovered,
		RepairsSent: s.FEC.RepairsSent, RecoveredByPeer: s.FEC.PacketsRecoveredByPeer,
		RepairBytesSent: s.FEC.RepairBytesSent, SourceBytesSent: s.FEC.SourceBytesSent,
		PacketsLost: s.PacketsLost, LossRepairsSent: s.FEC.LossRepairsSent, RepairProbesSent: s.FEC.RepairProbesSent,
		LostSourcesGivenUp: s.FEC.LostSourcesGivenUp, OverdueSources: s.FEC.OverdueSources,
		SmoothedRTT: s.SmoothedRTT, RTTVariance: s.RTTVariance, PeerMaxAckDelay: s.AckFrequency.MaxAckDelay,
		DatagramsSent: s.Datagrams.Sent, DatagramsLost: s.Datagrams.Lost,
		SendDropped: s.Datagrams.SendDropped, ReceiveDropped: s.Datagrams.ReceiveDropped,
		DatagramsHeld: s.FEC.DatagramsHeld, HeldGivenUp: s.FEC.HeldPacketsGivenUp,
		MaxDatagramSize: s.MaxDatagramSize, MTUBlackHole: s.MTUBlackHole,
	}
}

func (a tunnelCounts) minus(b tunnelCounts) tunnelCounts {
	return tunnelCounts{
		RepairsReceived: a.RepairsReceived - b.RepairsReceived, Recovered: a.Recovered - b.Recovered,
		RepairsSent: a.RepairsSent - b.RepairsSent, RecoveredByPeer: a.RecoveredByPeer - b.RecoveredByPeer,
		RepairBytesSent: a.RepairBytesSent - b.RepairBytesSent, SourceBytesSent: a.SourceBytesSent - b.SourceBytesSent,
		ServerRepairBytesSent: a.ServerRepairBytesSent - b.ServerRepairBytesSent,
		ServerSourceBytesSent: a.ServerSourceBytesSent - b.ServerSourceBytesSent,
		PacketsLost:           a.PacketsLost - b.PacketsLost, DatagramsLost: a.DatagramsLost - b.DatagramsLost,
		ServerPacketsLost:  a.ServerPacketsLost - b.ServerPacketsLost,
		LossRepairsSent:    a.LossRepairsSent - b.LossRepairsSent,
		RepairProbesSent:   a.RepairProbesSent - b.RepairProbesSent,
		LostSourcesGivenUp: a.LostSourcesGivenUp - b.LostSourcesGivenUp,
		OverdueSources:     a.OverdueSources - b.OverdueSources,
		SmoothedRTT:        a.SmoothedRTT, RTTVariance: a.RTTVariance, PeerMaxAckDelay: a.PeerMaxAckDelay,
		ServerLossRepairsSent: a.ServerLossRepairsSent - b.ServerLossRepairsSent,
		ServerOverdueSources:  a.ServerOverdueSources - b.ServerOverdueSources,
		DatagramsHeld:         a.DatagramsHeld - b.DatagramsHeld, HeldGivenUp: a.HeldGivenUp - b.HeldGivenUp,
		ServerDatagramsHeld: a.ServerDatagramsHeld - b.ServerDatagramsHeld,
		ServerHeldGivenUp:   a.ServerHeldGivenUp - b.ServerHeldGivenUp,
		DatagramsSent:       a.DatagramsSent - b.DatagramsSent,
		SendDropped:         a.SendDropped - b.SendDropped, ReceiveDropped: a.ReceiveDropped - b.ReceiveDropped,
		OverloadDrops: a.OverloadDrops - b.OverloadDrops,
		CPUSeconds:    a.CPUSeconds - b.CPUSeconds,
		PathTooSmall:  a.PathTooSmall - b.PathTooSmall,
		// The path's state is the newer one's.
		MaxDatagramSize: a.MaxDatagramSize, MTUBlackHole: a.MTUBlackHole,
	}
}

func newResult(stack, link string, size int64, b batch) Result {
	t := slices.Clone(b.times)
	slices.Sort(t)
	return Result{
		Stack: stack, Link: link, SizeBytes: size, Requests: len(t), Failed: b.failed,
		P25S:   bench.Percentile(t, 0.25),
		P50S:   bench.Percentile(t, 0.5),
		P75S:   bench.Percentile(t, 0.75),
		P99S:   bench.Percentile(t, 0.99),
		P999S:  bench.Percentile(t, 0.999),
		MaxS:   t[len(t)-1],
		TimesS: t,
	}
}

// fecOverhead is the repair bytes both ends sent per byte of response
// body.
func (a tunnelCounts) fecOverhead(payload int64) float64 {
	if payload <= 0 {
		return 0
	}
	return float64(a.RepairBytesSent+a.ServerRepairBytesSent) / float64(payload)
}

// setExcess fills each lossy result's ExcessP99S from the lossless result
// of the same stack and size.
func setExcess(rs []Result) {
	for i := range rs {
		if rs[i].Link != LinkLossy {
			continue
		}
		for _, ref := range rs {
			if ref.Link == LinkLossless && ref.Stack == rs[i].Stack && ref.SizeBytes == rs[i].SizeBytes {
				e := rs[i].P99S - ref.P99S
				rs[i].ExcessP99S = &e
			}
		}
	}
}
