package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// logLimits writes the limits' lines in a period where a counter moved,
// not when only what is held changed, and every period when verbose.
func TestLogLimits(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			var st limitStats
			read := func() limitStats {
				mu.Lock()
				defer mu.Unlock()
				return st
			}
			set := func(f func(*limitStats)) {
				mu.Lock()
				f(&st)
				mu.Unlock()
			}
			var out lockedBuffer
			ctx, cancel := context.WithCancel(context.Background())
			wait := logLimits(ctx, read, &out, time.Second, verbose)
			set(func(s *limitStats) { s.quic.Handshakes = 3 })
			time.Sleep(1500 * time.Millisecond) // first period: only held moved
			set(func(s *limitStats) { s.quic.Refused.ConnectionsPerIP = 2; s.quic.RetriesSent = 5 })
			time.Sleep(time.Second) // second period: a counter moved
			time.Sleep(time.Second) // third period: nothing moved
			cancel()
			wait()
			lines := strings.Count(out.String(), "quic limits:")
			want := 1
			if verbose {
				want = 3
			}
			if lines != want {
				t.Errorf("verbose %v: %d quic lines, want %d:\n%s", verbose, lines, want, out.String())
			}
			if !strings.Contains(out.String(), "quic limits: 2 clients refused (0 at --max-handshakes, 0 at --max-handshakes-per-ip, 0 at --max-conns, "+
				"2 at --max-conns-per-ip, 0 waiting to be accepted), 0 connections evicted (0 silent handshakes, 0 busy handshakes, "+
				"0 idle connections), 5 Retry packets sent, 0 invalid tokens; 3 handshakes and 0 connections held") {
				t.Errorf("the line of the refusals:\n%s", out.String())
			}
			if h3 := strings.Count(out.String(), "h3 limits:"); h3 != want {
				t.Errorf("%d h3 lines, want %d", h3, want)
			}
		})
	}
}
