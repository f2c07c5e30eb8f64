package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// TestSimPMTUDownload moves 2 MiB over the p2p profile with a queue that
// loses nothing, without an MTU limit and with links that drop UDP
// payloads above 1400 bytes: each end settles within its path's limit,
// the server reaches 1452 where nothing limits it, the data arrives
// whole, and no lost probe slows the sender (no congestion signal at all
// on a path that drops nothing else).
func TestSimPMTUDownload(t *testing.T) {
	for _, mtu := range []int{0, 1400} {
		t.Run(fmt.Sprint(mtu), func(t *testing.T) {
			prof := lossOnly(t, "")
			prof.Up.MTU, prof.Down.MTU = mtu, mtu
			ccfg, scfg := testConfigs(t, 310)
			sp, d := runDownload(t, prof, 2<<20, ccfg, scfg, 60*time.Second)
			// The last probes may still be out when the data is in.
			sp.run(t, func() bool {
				return sp.server.conn.pmtu.phase == pmtuDone && sp.client.conn.pmtu.phase == pmtuDone
			}, d.doneAt+10*time.Second)
			logStats(t, sp)
			up, down := sp.path.Stats()
			for _, c := range []*Conn{sp.server.conn, sp.client.conn} {
				st := c.Stats()
				t.Logf("client=%v: %+v", c.isClient, st.PathMTU)
				want := DefaultMaxProbeDatagramSize
				if mtu > 0 {
					want = 1389 // the binary search's last success below 1400
				}
				if st.PathMTU.MaxDatagramSize != want || st.PathMTU.Searching {
					t.Errorf("client=%v: datagram size %d, want %d", c.isClient, st.PathMTU.MaxDatagramSize, want)
				}
				if st.Recovery.CongestionSignals != 0 || st.PacketsRetransmitted != 0 {
					t.Errorf("client=%v: %d congestion signals, %d retransmissions", c.isClient, st.Recovery.CongestionSignals, st.PacketsRetransmitted)
				}
				if lost := int64(st.PathMTU.ProbesLost); mtu > 0 && lost == 0 {
					t.Errorf("client=%v: no probe lost below a 1400-byte MTU", c.isClient)
				}
			}
			if dropped := up.DroppedMTU + down.DroppedMTU; (mtu > 0) != (dropped > 0) {
				t.Errorf("%d datagrams dropped for their size", dropped)
			}
			lost := sp.server.conn.Stats().PathMTU.ProbesLost + sp.client.conn.Stats().PathMTU.ProbesLost
			if dropped := up.DroppedMTU + down.DroppedMTU; dropped != int64(lost) {
				t.Errorf("the link dropped %d datagrams for their size, the ends lost %d probes", dropped, lost)
			}
			t.Logf("done at %v", d.doneAt)
		})
	}
}

// TestSimPMTUWithFEC: with FEC on, the datagram size grows from 1200 to
// 1452 during the transfer, so source symbols of both lengths share the
// coding window; losses in the middle are still rebuilt, never
// retransmitted.
func TestSimPMTUWithFEC(t *testing.T) {
	prof := lossOnly(t, "drop:300,500,700")
	ccfg, scfg := fecConfigs(t, 311, recovery.FECSignal)
	sp, _ := runDownload(t, prof, 2<<20, ccfg, scfg, 60*time.Second)
	logStats(t, sp)
	logFEC(t, sp)
	st := sp.server.conn.Stats()
	if st.PathMTU.MaxDatagramSize != DefaultMaxProbeDatagramSize {
		t.Errorf("server datagram size %d, want %d", st.PathMTU.MaxDatagramSize, DefaultMaxProbeDatagramSize)
	}
	if st.Recovery.PacketsRecovered != 3 || st.PacketsRetransmitted != 0 {
		t.Errorf("peer recovered %d packets, %d retransmitted; want 3 and 0", st.Recovery.PacketsRecovered, st.PacketsRetransmitted)
	}
	if st.FEC.SourcesSent == 0 {
		t.Error("no FEC source sent")
	}
}
