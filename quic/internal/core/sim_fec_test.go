package core

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// fecConfigs returns client and server configurations with FEC on.
func fecConfigs(t *testing.T, seed uint64, policy recovery.FECPolicy) (client, server *Config) {
	ccfg, scfg := testConfigs(t, seed)
	ccfg.FEC, ccfg.Recovery.FECPolicy = &FECConfig{}, policy
	scfg.FEC, scfg.Recovery.FECPolicy = &FECConfig{}, policy
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
// FEC the tail repair rebuilds one at once, and the acknowledgement of
// that repair, which shows the other still missing, brings a second
// repair: nothing is retransmitted and no probe timeout fires. (Without
// FEC the same losses wait for a PTO: TestSimTransferTailLoss.)
func TestSimFECProtectsTheTail(t *testing.T) {
	const size = 1 << 20
	ccfg, scfg := fecConfigs(t, 72, recovery.FECSignal)
	var qlog bytes.Buffer
	scfg.Qlog = &qlog
	clean, cd := runDownload(t, lossOnly(t, ""), size, ccfg, scfg, 60*time.Second)
	// The datagrams of the last packets with stream data: after the
	// handshake each datagram holds one packet, so a packet's place from
	// the end of the qlog is its datagram's from the end of the sends.
	var sent []bool // per packet_sent record: it carried stream data
	for rec := range strings.SplitSeq(qlog.String(), "\x1e") {
		if strings.Contains(rec, `"transport:packet_sent"`) {
			sent = append(sent, strings.Contains(rec, `"frame_type":"stream"`))
		}
	}
	var data []int // datagram indexes of stream packets, last first
	for i := len(sent) - 1; i >= 0 && len(data) < 2; i-- {
		if sent[i] {
			data = append(data, len(clean.server.sentAt)-(len(sent)-i))
		}
	}
	t.Logf("clean run done at %v; last stream datagrams %v of %d", cd.doneAt, data, len(clean.server.sentAt))
	for _, lost := range []int{1, 2} {
		t.Run(fmt.Sprintf("last %d", lost), func(t *testing.T) {
			prof := lossOnly(t, fmt.Sprintf("drop:%d-%d", data[lost-1], data[0]))
			ccfg, scfg := fecConfigs(t, 72, recovery.FECSignal)
			sp, d := runDownload(t, prof, size, ccfg, scfg, 60*time.Second)
			logStats(t, sp)
			logFEC(t, sp)
			st := sp.server.conn.Stats()
			if st.Recovery.PTOs != 0 {
				t.Errorf("%d PTOs", st.Recovery.PTOs)
			}
			if st.PacketsRetransmitted != 0 {
				t.Errorf("%d retransmissions", st.PacketsRetransmitted)
			}
			if rec := sp.client.conn.Stats().FEC.SymbolsRecovered; rec != uint64(lost) {
				t.Errorf("client rebuilt %d packets, want %d", rec, lost)
			}
			t.Logf("clean %v, tail lost %v", cd.doneAt, d.doneAt)
		})
	}
}

// TestSimFECFollowsTheLossRate changes the loss rate in the middle of a
// transfer, from one datagram in 1000 to one in 25: the controller,
// which learns the loss from ACKs, sends few repairs in the first phase
// and several times more in the second, and rebuilds most losses (the
// rest are retransmitted after the repairs' hold: a loss every 25
// packets sometimes outruns the window's repairs).
func TestSimFECFollowsTheLossRate(t *testing.T) {
	const phase = 4000 // datagrams of the server per phase
	var pat strings.Builder
	for i := range 2 * phase {
		switch {
		case i < phase && i%1000 == 999, i >= phase && i%25 == 12:
			pat.WriteByte('1')
		default:
			pat.WriteByte('0')
		}
	}
	prof := lossOnly(t, "pattern:"+pat.String())
	ccfg, scfg := fecConfigs(t, 73, recovery.FECHide)
	d := newDownload(t, 8<<20)
	sp := newSimPair(t, prof, 42, ccfg, scfg, nil)
	var first FECStats // the server's counters when the second phase starts
	sp.server.app = func(now time.Duration, c *Conn) {
		d.server(now, c)
		if first.SourcesSent == 0 && len(sp.server.sentAt) >= phase {
			first = c.Stats().FEC
		}
	}
	sp.client.app = d.clientApp(sp)
	sp.run(t, func() bool { return d.done }, 120*time.Second)
	if d.got != 8<<20 {
		t.Fatalf("received %d bytes", d.got)
	}
	logStats(t, sp)
	logFEC(t, sp)
	all := sp.server.conn.Stats()
	rate1 := float64(first.RepairsSent) / float64(first.SourcesSent)
	rate2 := float64(all.FEC.RepairsSent-first.RepairsSent) / float64(all.FEC.SourcesSent-first.SourcesSent)
	t.Logf("repairs per source: %.4f at 0.1%% loss, %.4f at 4%% loss", rate1, rate2)
	if rate1 > 0.02 || rate2 < 0.04 || rate2 < 4*rate1 {
		t.Errorf("repair rates %.4f then %.4f do not follow 0.1%% then 4%% loss", rate1, rate2)
	}
	lost := sp.client.conn.Stats().FEC.SymbolsRecovered + all.PacketsRetransmitted
	if rec := sp.client.conn.Stats().FEC.SymbolsRecovered; float64(rec) < 0.8*float64(lost) {
		t.Errorf("FEC rebuilt %d of %d lost packets", rec, lost)
	}
	if all.Recovery.PTOs != 0 {
		t.Errorf("%d PTOs", all.Recovery.PTOs)
	}
}
