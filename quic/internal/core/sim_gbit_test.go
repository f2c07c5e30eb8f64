package core

import (
	"testing"
	"time"
)

// TestSimGeoGbit moves 200 MB over geo-gbit (1000/20 Mbit/s, 325 ms each
// way, a buffer of one bandwidth-delay product, 81.25 MB) with the default
// limits: the congestion window grows past the 64 MiB it was once capped
// at, and the path runs at its rate once slow start is over. The physical
// floor is the server's handshake completion, the propagation delay and
// 1.6 s at the link rate; the run is deterministic: 4.76 s when written,
// and 6.26 s with the former limits (64 MiB windows and send buffer, a
// 96 MiB connection window), which the bound of four round trips over the
// floor (5.5 s) fails.
func TestSimGeoGbit(t *testing.T) {
	if testing.Short() {
		t.Skip("200 MB transfer")
	}
	prof := profile(t, "geo-gbit")
	ccfg, scfg := testConfigs(t, 62)
	for _, c := range []*Config{ccfg, scfg} {
		c.MaxDatagramSize = 1452
	}
	const size = 200_000_000
	d := newDownload(t, size)
	sp := newSimPair(t, prof, 42, ccfg, scfg, nil)
	largest := 0
	sp.server.app = func(now time.Duration, c *Conn) {
		d.server(now, c)
		largest = max(largest, c.sender.CongestionWindow())
	}
	sp.client.app = d.clientApp(sp)
	sp.run(t, func() bool { return d.done }, 60*time.Second)
	if d.got != size {
		t.Fatalf("received %d bytes, want %d", d.got, size)
	}
	floor := sp.server.completedAt + prof.Down.Delay + serialization(size, prof.Down.RateBps)
	t.Logf("200 MB in %v (floor %v), largest congestion window %d B", d.doneAt, floor, largest)
	logStats(t, sp)
	if largest <= 64<<20 {
		t.Errorf("congestion window peaked at %d B, not past 64 MiB", largest)
	}
	if d.doneAt > floor+4*prof.RTT() {
		t.Errorf("200 MB took %v, more than four round trips over the floor %v", d.doneAt, floor)
	}
}
