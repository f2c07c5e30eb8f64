package core

import (
	"testing"
	"time"
)

// TestSimGeoLarge moves 100 MB over the geo-large profile (250/3 Mbit/s,
// 300 ms each way) with CUBIC: picoquic's satellite test, whose pass bound
// is 6.5 s; the physical floor is about 4.4 s. Standard slow start from a
// 10-packet window needs about ten round trips (6 s) to reach the 18.75 MB
// path, so this core with RFC CUBIC and HyStart++ takes about 11 s; the
// bound guards against regressions until a faster start (Careful Resume,
// BBR) lands.
func TestSimGeoLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB transfer")
	}
	prof := profile(t, "geo-large")
	ccfg, scfg := testConfigs(t, 50)
	for _, c := range []*Config{ccfg, scfg} {
		c.MaxDatagramSize = 1452
		// The 3 Mbit/s return link cannot carry an ACK for every second
		// packet at 250 Mbit/s.
		c.AckElicitingThreshold = 32
	}
	const size = 100_000_000
	sp, d := runDownload(t, prof, size, ccfg, scfg, 60*time.Second)
	floor := sp.client.completedAt + serialization(size, prof.Down.RateBps)
	t.Logf("100 MB in %v (physical floor %v, picoquic bound 6.5s)", d.doneAt, floor)
	logStats(t, sp)
	if d.doneAt > 12*time.Second {
		t.Errorf("100 MB took %v, want at most 12 s", d.doneAt)
	}
}
