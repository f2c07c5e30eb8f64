package core

import (
	"fmt"
	"testing"
	"time"
)

// TestSimTransferDropList loses chosen packets in both directions,
// handshake packets included, and requires the exact bytes to arrive.
func TestSimTransferDropList(t *testing.T) {
	cases := []struct{ name, up, down string }{
		{"client-first-initial", "drop:0", "drop:40-45"},
		{"server-first-flight", "drop:3", "drop:0,1,2"},
		{"client-handshake", "drop:2,3", "drop:5"},
		{"bursts", "drop:10-15,300", "drop:30-37,500-507,2000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prof := profile(t, "p2p")
			prof.Up.Loss, prof.Down.Loss = tc.up, tc.down
			ccfg, scfg := testConfigs(t, 30)
			sp, d := runDownload(t, prof, 4<<20, ccfg, scfg, 120*time.Second)
			t.Logf("done at %v", d.doneAt)
			logStats(t, sp)
		})
	}
}

// TestSimTransferTailLoss loses the last datagrams of a transfer, the FIN
// among them: only a probe timeout can recover them (RFC 9002 section
// 6.2).
func TestSimTransferTailLoss(t *testing.T) {
	const size = 1 << 20
	ccfg, scfg := testConfigs(t, 31)
	clean, cd := runDownload(t, profile(t, "p2p"), size, ccfg, scfg, 60*time.Second)
	// Drop the last three datagrams the server sent before the client
	// read the end of the stream.
	n := 0
	for _, at := range clean.server.sentAt {
		if at <= cd.doneAt-profile(t, "p2p").Down.Delay {
			n++
		}
	}
	prof := profile(t, "p2p")
	prof.Down.Loss = fmt.Sprintf("drop:%d-%d", n-3, n-1)
	ccfg, scfg = testConfigs(t, 31)
	sp, d := runDownload(t, prof, size, ccfg, scfg, 60*time.Second)
	_, lossy := sp.path.Stats()
	if lossy.DroppedLoss != 3 {
		t.Fatalf("%d datagrams dropped, want 3", lossy.DroppedLoss)
	}
	t.Logf("clean %v, with the tail lost %v", cd.doneAt, d.doneAt)
	logStats(t, sp)
	if d.doneAt-cd.doneAt > time.Second {
		t.Errorf("tail loss cost %v", d.doneAt-cd.doneAt)
	}
}

// TestSimTransferUniformLoss loses 2% of the packets each way.
func TestSimTransferUniformLoss(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		prof := profile(t, "p2p").WithSeed(seed)
		prof.Up.Loss, prof.Down.Loss = "uniform:0.02", "uniform:0.02"
		ccfg, scfg := testConfigs(t, 40+seed)
		sp, d := runDownload(t, prof, 2<<20, ccfg, scfg, 120*time.Second)
		t.Logf("seed %d: 2 MiB in %v", seed, d.doneAt)
		logStats(t, sp)
		if d.doneAt > 10*time.Second {
			t.Errorf("seed %d: 2 MiB took %v at 2%% loss", seed, d.doneAt)
		}
	}
}
