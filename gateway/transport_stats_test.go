package gateway

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic"
)

// TestTransportStatsAdd: the counters of a tunnel's connections add up,
// the datagrams held behind a missing packet and the missing packets
// given up among them, and the RTT is the largest.
func TestTransportStatsAdd(t *testing.T) {
	conn := func(rtt time.Duration, k uint64) quic.ConnectionStats {
		var s quic.ConnectionStats
		s.SmoothedRTT, s.PacketsSent, s.PacketsLost = rtt, 100*k, k
		s.FEC.RepairBytesSent, s.FEC.SourceBytesSent = 10*k, 200*k
		s.FEC.LossRepairsSent, s.FEC.RepairProbesSent = k, k
		s.FEC.DatagramsHeld, s.FEC.HeldPacketsGivenUp, s.FEC.OverdueSources = 7*k, 2*k, 5*k
		s.Datagrams.SendDropped, s.Datagrams.ReceiveDropped = k, k
		return s
	}
	var ts TransportStats
	ts.add(conn(50*time.Millisecond, 1))
	ts.add(conn(30*time.Millisecond, 2))
	want := TransportStats{
		SmoothedRTT: 50 * time.Millisecond, PacketsSent: 300, PacketsLost: 3,
		RepairBytesSent: 30, SourceBytesSent: 600, LossRepairsSent: 6,
		DatagramsHeld: 21, HeldPacketsGivenUp: 6, OverdueSources: 15, DatagramsDropped: 6,
	}
	if ts != want {
		t.Errorf("sum %+v, want %+v", ts, want)
	}
	if ts.LossRate() != 0.01 || ts.FECOverhead() != 0.05 {
		t.Errorf("loss rate %v, FEC overhead %v: want 0.01, 0.05", ts.LossRate(), ts.FECOverhead())
	}
}
