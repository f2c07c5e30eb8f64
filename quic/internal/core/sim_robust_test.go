package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// TestSimHandshakeLoss runs handshakes through 30% loss in bursts of at
// most 3 packets each way, as the interop runner's handshakeloss case does,
// and a 100 KB transfer on each.
func TestSimHandshakeLoss(t *testing.T) {
	const runs = 50
	var worst time.Duration
	for seed := range uint64(runs) {
		prof := profile(t, "p2p").WithSeed(seed)
		prof.Up.Loss, prof.Down.Loss = "burst:0.3,3", "burst:0.3,3"
		ccfg, scfg := testConfigs(t, 200+seed)
		_, d := runDownload(t, prof, 100_000, ccfg, scfg, 60*time.Second)
		worst = max(worst, d.doneAt)
	}
	t.Logf("%d transfers through 30%% loss; slowest %v", runs, worst)
}

// TestSimCorruption replaces a byte in the first 50 of some packets each
// way: corrupted packets fail authentication and are recovered like
// losses.
func TestSimCorruption(t *testing.T) {
	for seed := range uint64(5) {
		prof := profile(t, "p2p").WithSeed(seed)
		for _, l := range []*netsim.LinkConfig{&prof.Up, &prof.Down} {
			l.Corrupt, l.CorruptRegion = 0.05, 50
		}
		ccfg, scfg := testConfigs(t, 300+seed)
		sp, d := runDownload(t, prof, 1<<20, ccfg, scfg, 60*time.Second)
		if sp.client.conn.Stats().DecryptionFailures == 0 && sp.server.conn.Stats().DecryptionFailures == 0 {
			t.Errorf("seed %d: no packet failed authentication", seed)
		}
		t.Logf("seed %d: 1 MiB in %v", seed, d.doneAt)
	}
}

// TestSimBlackhole turns the path off for 2 s during a transfer: probes
// back off, and the transfer resumes when the path returns.
func TestSimBlackhole(t *testing.T) {
	prof := profile(t, "p2p")
	for _, l := range []*netsim.LinkConfig{&prof.Up, &prof.Down} {
		l.Outages = []netsim.Outage{{Start: 2 * time.Second, Duration: 2 * time.Second}}
	}
	ccfg, scfg := testConfigs(t, 400)
	sp, d := runDownload(t, prof, 6<<20, ccfg, scfg, 60*time.Second)
	t.Logf("6 MiB with a 2 s outage in %v", d.doneAt)
	logStats(t, sp)
	if d.doneAt > 12*time.Second {
		t.Errorf("transfer took %v", d.doneAt)
	}
}
