package core

import (
	"runtime"
	"testing"
	"time"
)

// TestLargeLimitsCostNothingForSmallTransfers: the default limits (a
// congestion window, send buffer and receive windows of 160 MiB, 256 MiB
// for the connection) commit no memory up front. A 1 MB download over the
// geo profile, in virtual time, allocates within a few percent of what the
// same download allocates with every limit at 4 MiB, and keeps as much
// live at its end. A buffer, ring or index sized from a limit rather than
// from the data would show here as megabytes.
func TestLargeLimitsCostNothingForSmallTransfers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation")
	}
	const size = 1_000_000
	small := func(c *Config) {
		c.MaxStreamReceiveWindow, c.MaxConnReceiveWindow = 4<<20, 4<<20
		c.InitialStreamReceiveWindow, c.InitialConnReceiveWindow = 0, 0
		c.MaxSendBuffer = 4 << 20
		c.Recovery.MaxWindow = 4 << 20
	}
	run := func(limit func(*Config)) (allocated, live uint64) {
		ccfg, scfg := testConfigs(t, 60)
		if limit != nil {
			limit(ccfg)
			limit(scfg)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		sp, d := runDownload(t, profile(t, "geo"), size, ccfg, scfg, 60*time.Second)
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(sp)
		if !d.done {
			t.Fatal("download did not finish")
		}
		return after.TotalAlloc - before.TotalAlloc, after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
	}
	run(nil) // warm the block pools and the TLS caches
	smallAlloc, smallLive := run(small)
	bigAlloc, bigLive := run(nil)
	t.Logf("1 MB over geo: allocated %d B (live after %d B) with the default limits, %d B (%d B) with 4 MiB limits",
		bigAlloc, bigLive, smallAlloc, smallLive)
	if bigAlloc > smallAlloc+smallAlloc/10 {
		t.Errorf("default limits allocated %d B, more than 110%% of the %d B with 4 MiB limits", bigAlloc, smallAlloc)
	}
	if bigLive > smallLive+1<<20 {
		t.Errorf("default limits keep %d B live, 4 MiB limits %d B", bigLive, smallLive)
	}
}
