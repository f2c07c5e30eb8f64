package core

import (
	"testing"
	"time"
)

// TestSimGeoLarge moves 100 MB over the geo-large profile (250/3 Mbit/s,
// 300 ms each way, a buffer of one bandwidth-delay product) with CUBIC:
// picoquic's satellite test, whose pass bound is 6.5 s; the physical floor
// is about 4.4 s (the server's data starts 0.9 s in, after the handshake,
// and takes 0.3 s to arrive and 3.2 s at the link rate). RFC 9002's slow
// start with HyStart++ needed ten round trips of 600 ms to fill the path
// and overflowed the buffer: 11 s. The long-RTT slow start
// (recovery.LongRTTConfig) fills it in four round trips without a loss.
// The run is deterministic; 6.408 s when written.
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
	// The server sends data once its handshake completes.
	floor := sp.server.completedAt + prof.Down.Delay + serialization(size, prof.Down.RateBps)
	t.Logf("100 MB in %v (physical floor %v, picoquic bound 6.5s)", d.doneAt, floor)
	logStats(t, sp)
	if d.doneAt > 6500*time.Millisecond {
		t.Errorf("100 MB took %v, want at most picoquic's 6.5 s", d.doneAt)
	}
	if st := sp.server.conn.Stats(); st.PacketsLost != 0 || st.Recovery.PTOs != 0 {
		t.Errorf("%d packets lost, %d PTOs: the slow start overflowed the buffer", st.PacketsLost, st.Recovery.PTOs)
	}
}

// TestSimGeoLongRTTOption compares 10 MB over the geo profile (50/10
// Mbit/s, 325 ms each way) with and without the long-RTT slow start: the
// option reaches the controller, and RFC 9002's slow start is slower by
// several round trips.
func TestSimGeoLongRTTOption(t *testing.T) {
	prof := profile(t, "geo")
	const size = 10_000_000
	var took [2]time.Duration
	for i, disable := range []bool{false, true} {
		ccfg, scfg := testConfigs(t, 51)
		scfg.Recovery.LongRTT.Disabled = disable
		if d, err := scfg.withDefaults(); err != nil || d.recoveryConfig(true).LongRTT.Disabled != disable {
			t.Fatalf("LongRTT.Disabled %v: %v", disable, err)
		}
		_, d := runDownload(t, prof, size, ccfg, scfg, 60*time.Second)
		took[i] = d.doneAt
	}
	t.Logf("10 MB over geo: %v with the long-RTT slow start, %v without", took[0], took[1])
	if took[0]+3*prof.RTT() > took[1] {
		t.Errorf("long-RTT slow start %v, RFC 9002's %v: want three round trips faster", took[0], took[1])
	}
}
