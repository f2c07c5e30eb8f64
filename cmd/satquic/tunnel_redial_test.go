package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic"
)

// TestRedialBackoffSchedule: after a loss the attempts come 1 s, then 2,
// 4, 8, 16 and 30 s (the cap) apart, less at most a fifth for the jitter;
// each failure and the success are reported; a session that lasted more
// than 30 s starts the next loss from 1 s again, a shorter one keeps the
// delay reached.
func TestRedialBackoffSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []time.Time
		failures := 7
		dial := func(context.Context) (int, error) {
			attempts = append(attempts, time.Now())
			if len(attempts) <= failures {
				return 0, errors.New("connection refused")
			}
			return len(attempts), nil
		}
		var out bytes.Buffer
		r := newRedialer(dial, &out, rand.New(rand.NewPCG(1, 2)))
		lostAt := time.Now()
		c, err := r.redial(t.Context(), errors.New("idle timeout"))
		if err != nil || c != failures+1 {
			t.Fatalf("redial: %d, %v", c, err)
		}
		want := []time.Duration{1, 2, 4, 8, 16, 30, 30, 30}
		prev := lostAt
		for i, at := range attempts {
			gap, base := at.Sub(prev), want[i]*time.Second
			if gap > base || gap < base-base/5 {
				t.Errorf("attempt %d came %v after the previous, want %v less at most a fifth", i+1, gap, base)
			}
			prev = at
		}
		text := out.String()
		for _, w := range []string{"tunnel lost: idle timeout; reconnecting in ", "reconnecting failed: connection refused; next attempt in ", "reconnected after "} {
			if !strings.Contains(text, w) {
				t.Errorf("the report lacks %q:\n%s", w, text)
			}
		}
		if n := strings.Count(text, "reconnecting failed"); n != failures {
			t.Errorf("%d failures reported, want %d", n, failures)
		}
		n, down := r.stats()
		if n != 1 || down != attempts[len(attempts)-1].Sub(lostAt) {
			t.Errorf("stats: %d reconnects, %v down", n, down)
		}

		// A session of 10 s: the next loss waits the capped delay.
		time.Sleep(10 * time.Second)
		attempts, failures = nil, 0
		lostAt = time.Now()
		if _, err := r.redial(t.Context(), errors.New("reset")); err != nil {
			t.Fatal(err)
		}
		if gap := attempts[0].Sub(lostAt); gap < 24*time.Second {
			t.Errorf("after a short session the first attempt came %v after the loss, want the capped delay", gap)
		}
		// A session of 31 s: the schedule starts again from 1 s.
		time.Sleep(31 * time.Second)
		attempts = nil
		lostAt = time.Now()
		if _, err := r.redial(t.Context(), errors.New("reset")); err != nil {
			t.Fatal(err)
		}
		if gap := attempts[0].Sub(lostAt); gap > time.Second || gap < 800*time.Millisecond {
			t.Errorf("after a long session the first attempt came %v after the loss, want about 1 s", gap)
		}
	})
}

// TestRedialAfterReset: a stateless reset after a long session (the
// server restarted and forgot the connection) is redialed at once, and a
// failure then waits 1 s; after a short session a reset waits as any loss
// does.
func TestRedialAfterReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []time.Time
		fail := 1
		dial := func(context.Context) (int, error) {
			attempts = append(attempts, time.Now())
			if fail > 0 {
				fail--
				return 0, errors.New("refused")
			}
			return len(attempts), nil
		}
		r := newRedialer(dial, io.Discard, rand.New(rand.NewPCG(3, 4)))
		reset := fmt.Errorf("tunnel: receiving from the tunnel: %w", &quic.StatelessResetError{})
		time.Sleep(31 * time.Second)
		lostAt := time.Now()
		if _, err := r.redial(t.Context(), reset); err != nil {
			t.Fatal(err)
		}
		if len(attempts) != 2 || attempts[0] != lostAt || attempts[1].Sub(lostAt) > time.Second || attempts[1].Sub(lostAt) < 800*time.Millisecond {
			t.Fatalf("attempts at %v after the loss, want at once and about 1 s later", sinceEach(attempts, lostAt))
		}
		// A session of 5 s ending in a reset: the schedule goes on (2 s).
		time.Sleep(5 * time.Second)
		attempts = nil
		lostAt = time.Now()
		if _, err := r.redial(t.Context(), reset); err != nil {
			t.Fatal(err)
		}
		if gap := attempts[0].Sub(lostAt); gap < 1600*time.Millisecond {
			t.Errorf("after a short session a reset was redialed %v after it, want the schedule's wait", gap)
		}
	})
}

// sinceEach is the time of each of ts after t0.
func sinceEach(ts []time.Time, t0 time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(t0)
	}
	return out
}

// TestRedialEndsWithContext: the end of ctx stops the waits at once.
func TestRedialEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dial := func(context.Context) (int, error) { return 0, errors.New("unreachable") }
		var out bytes.Buffer
		r := newRedialer(dial, &out, rand.New(rand.NewPCG(1, 2)))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		if _, err := r.redial(ctx, errors.New("lost")); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("redial returned %v", err)
		}
		if d := time.Since(start); d != 5*time.Second {
			t.Fatalf("redial returned %v after the loss, want 5s", d)
		}
		if n, down := r.stats(); n != 0 || down != 5*time.Second {
			t.Fatalf("stats: %d reconnects, %v down", n, down)
		}
	})
}
