package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// fecConfigs returns client and server configurations with FEC on.
func fecConfigs(t *testing.T, seed uint64, policy recovery.FECPolicy) (client, server *Config) {
	ccfg, scfg := testConfigs(t, seed)
	ccfg.FEC = &FECConfig{Policy: policy}
	scfg.FEC = &FECConfig{Policy: policy}
	return ccfg, scfg
}

// lossOnly is the p2p profile with a queue deep enough that slow start
// loses nothing to it: the only losses are the ones a test asks for.
func lossOnly(t *testing.T, down string) netsim.Profile {
	prof := profile(t, "p2p")
	prof.Down.QueuePackets, prof.Down.QueueBytes = 0, 4<<20
	prof.Down.Loss = down
	return prof
}

func logFEC(t *testing.T, sp *simPair) {
	for _, c := range []*Conn{sp.server.conn, sp.client.conn} {
		st := c.Stats()
		t.Logf("client=%v: FEC %+v recovered by peer %d (after loss %d), spurious retransmissions %d",
			c.isClient, st.FEC, st.Recovery.PacketsRecovered, st.Recovery.RecoveredAfterLoss, st.SpuriousRetransmissions)
	}
}

// TestSimFECNegotiation: FEC runs only when both endpoints offer it; a peer
// without it sees nothing but an unknown transport parameter.
func TestSimFECNegotiation(t *testing.T) {
	for _, tc := range []struct {
		name           string
		client, server bool
	}{{"both", true, true}, {"client only", true, false}, {"server only", false, true}, {"neither", false, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ccfg, scfg := testConfigs(t, 70)
			if tc.client {
				ccfg.FEC = &FECConfig{}
			}
			if tc.server {
				scfg.FEC = &FECConfig{}
			}
			sp, _ := runDownload(t, lossOnly(t, ""), 256<<10, ccfg, scfg, 30*time.Second)
			st := sp.server.conn.Stats().FEC
			both := tc.client && tc.server
			if st.Enabled != both || (st.SourcesSent > 0) != both {
				t.Errorf("server FEC %+v, want enabled=%v", st, both)
			}
			// The last repairs may still be on the way when the
			// download ends.
			if cst := sp.client.conn.Stats().FEC; cst.RepairsReceived > st.RepairsSent || (both && cst.RepairsReceived == 0) {
				t.Errorf("client received %d repairs, server sent %d", cst.RepairsReceived, st.RepairsSent)
			}
		})
	}
}

// TestSimFECRepairsLossWithoutRetransmission loses single packets in the
// middle of a transfer: FEC rebuilds them, nothing is retransmitted and no
// probe timeout fires.
func TestSimFECRepairsLossWithoutRetransmission(t *testing.T) {
	prof := lossOnly(t, "drop:200,400,600")
	ccfg, scfg := fecConfigs(t, 71, recovery.FECSignal)
	sp, d := runDownload(t, prof, 2<<20, ccfg, scfg, 60*time.Second)
	logStats(t, sp)
	logFEC(t, sp)
	st := sp.server.conn.Stats()
	if st.PacketsRetransmitted != 0 || st.StreamBytesRetransmitted != 0 {
		t.Errorf("%d packets (%d stream bytes) retransmitted", st.PacketsRetransmitted, st.StreamBytesRetransmitted)
	}
	if st.Recovery.PTOs != 0 {
		t.Errorf("%d PTOs", st.Recovery.PTOs)
	}
	if st.Recovery.PacketsRecovered != 3 {
		t.Errorf("peer recovered %d packets, want 3", st.Recovery.PacketsRecovered)
	}
	if st.SpuriousRetransmissions != 0 {
		t.Errorf("%d spurious retransmissions", st.SpuriousRetransmissions)
	}
	t.Logf("done at %v", d.doneAt)
}

// TestSimFECProtectsTheTail loses the last datagrams of a transfer: with
// FEC the tail repair rebuilds one at once, a reactive repair the second
// one round trip later, and no probe timeout fires. (Without FEC the same
// losses wait for a PTO: TestSimTransferTailLoss.)
func TestSimFECProtectsTheTail(t *testing.T) {
	const size = 1 << 20
	ccfg, scfg := fecConfigs(t, 72, recovery.FECSignal)
	clean, cd := runDownload(t, lossOnly(t, ""), size, ccfg, scfg, 60*time.Second)
	n := 0
	for _, at := range clean.server.sentAt {
		if at <= cd.doneAt-profile(t, "p2p").Down.Delay {
			n++
		}
	}
	for _, lost := range []int{1, 2} {
		t.Run(fmt.Sprintf("last %d", lost), func(t *testing.T) {
			// The last datagrams with stream data go just before the
			// tail repairs.
			prof := lossOnly(t, fmt.Sprintf("drop:%d-%d", n-lost-2, n-3))
			ccfg, scfg := fecConfigs(t, 72, recovery.FECSignal)
			sp, d := runDownload(t, prof, size, ccfg, scfg, 60*time.Second)
			logStats(t, sp)
			logFEC(t, sp)
			st := sp.server.conn.Stats()
			if st.Recovery.PTOs != 0 {
				t.Errorf("%d PTOs", st.Recovery.PTOs)
			}
			if lost == 1 && st.PacketsRetransmitted != 0 {
				t.Errorf("%d retransmissions", st.PacketsRetransmitted)
			}
			if rec := sp.client.conn.Stats().FEC.SymbolsRecovered; rec != uint64(lost) {
				t.Errorf("client rebuilt %d packets, want %d", rec, lost)
			}
			t.Logf("clean %v, tail lost %v", cd.doneAt, d.doneAt)
		})
	}
}
