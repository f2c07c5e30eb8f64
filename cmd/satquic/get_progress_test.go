package main

import (
	"strings"
	"testing"
	"time"
)

func TestRenderProgress(t *testing.T) {
	for _, c := range []struct {
		received, expected int64
		known              bool
		rate               float64
		want               string
	}{
		// Without the total: bytes and rate only.
		{1 << 20, 0, false, 1e6, "1.0 MiB  8.0 Mbit/s"},
		{1 << 20, 4 << 20, false, 1e6, "1.0 MiB  8.0 Mbit/s"},
		{0, 0, true, 0, "0 B  0.0 Mbit/s"},
		// With it: bar, share, ETA.
		{1 << 20, 4 << 20, true, 1 << 20, "[======>                 ]  25%  1.0 MiB of 4.0 MiB  8.4 Mbit/s  ETA 4s"},
		{4 << 20, 4 << 20, true, 1 << 20, "[========================] 100%  4.0 MiB of 4.0 MiB  8.4 Mbit/s  ETA 0s"},
		{0, 4 << 20, true, 0, "[>                       ]   0%  0 B of 4.0 MiB  0.0 Mbit/s  ETA --"},
		// More than announced (a server that lied): capped at 100%.
		{5 << 20, 4 << 20, true, 1 << 20, "[========================] 100%  5.0 MiB of 4.0 MiB  8.4 Mbit/s  ETA 0s"},
	} {
		if got := renderProgress(c.received, c.expected, c.known, c.rate); got != c.want {
			t.Errorf("renderProgress(%d, %d, %v, %v):\n got %q\nwant %q", c.received, c.expected, c.known, c.rate, got, c.want)
		}
	}
}

func TestETA(t *testing.T) {
	for _, c := range []struct {
		remaining int64
		rate      float64
		want      string
	}{
		{0, 100, "0s"},
		{-5, 100, "0s"},
		{100, 0, "--"},
		{1000, 100, "11s"},
		{100 * 90, 100, "1m30s"},
		{100 * 3700, 100, "1h01m"},
		{1 << 62, 1, "--"},
	} {
		if got := eta(c.remaining, c.rate); got != c.want {
			t.Errorf("eta(%d, %v) = %q, want %q", c.remaining, c.rate, got, c.want)
		}
	}
}

// TestRateMeter: the rate follows the last rateWindow, not the average
// since the start.
func TestRateMeter(t *testing.T) {
	var m rateMeter
	t0 := time.Unix(0, 0)
	if r := m.bytesPerSecond(); r != 0 {
		t.Errorf("no samples: %v", r)
	}
	m.sample(t0, 0)
	// 1 MB/s for 10 s, then 4 MB/s for 3 s.
	n := int64(0)
	at := t0
	for range 40 {
		at = at.Add(progressTick)
		n += 250_000
		m.sample(at, n)
	}
	if r := m.bytesPerSecond(); r < 0.99e6 || r > 1.01e6 {
		t.Errorf("steady 1 MB/s: %v", r)
	}
	for range 12 {
		at = at.Add(progressTick)
		n += 1_000_000
		m.sample(at, n)
	}
	if r := m.bytesPerSecond(); r < 3.9e6 || r > 4.1e6 {
		t.Errorf("after 3 s at 4 MB/s: %v", r)
	}
	if len(m.samples) > int(rateWindow/progressTick)+2 {
		t.Errorf("%d samples kept", len(m.samples))
	}
}

// TestProgressNotTerminal: progress is drawn on terminals only.
func TestProgressNotTerminal(t *testing.T) {
	var b strings.Builder
	p := &getProgress{files: 1}
	stop := p.start(&b)
	p.announce(10)
	p.add(10)
	time.Sleep(progressTick + 50*time.Millisecond)
	stop()
	if b.Len() != 0 {
		t.Errorf("progress written to a non-terminal: %q", b.String())
	}
}
