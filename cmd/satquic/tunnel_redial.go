package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/satquic/satquic/quic"
)

// Reconnection: the first wait is redialFirst, doubled after each failed
// attempt up to redialMax; a session that lasted redialStable starts the
// next loss's waits from redialFirst again, while one that ended sooner
// (a server that accepts and drops at once) keeps the delay it had.
const (
	redialFirst  = time.Second
	redialMax    = 30 * time.Second
	redialStable = 30 * time.Second
)

// backoff is the schedule of waits between reconnection attempts: each
// wait is the base delay less up to a fifth of it at random, so that
// clients that lost the same server do not all come back at once.
type backoff struct {
	next time.Duration // base delay of the next wait
	rnd  *rand.Rand
}

func newBackoff(rnd *rand.Rand) *backoff {
	return &backoff{next: redialFirst, rnd: rnd}
}

// wait returns the next wait and doubles the base delay for the one
// after, up to redialMax.
func (b *backoff) wait() time.Duration {
	d := b.next
	b.next = min(2*b.next, redialMax)
	return d - time.Duration(b.rnd.Int64N(int64(d/5)+1))
}

// reset starts the schedule again from redialFirst.
func (b *backoff) reset() { b.next = redialFirst }

// redialer replaces a lost connection: it waits, dials, and on failure
// waits longer, until a dial succeeds or ctx ends. It keeps the count of
// reconnections and the time spent without a tunnel.
type redialer[C any] struct {
	dial   func(ctx context.Context) (C, error)
	stderr io.Writer
	wait   *backoff

	mu         sync.Mutex
	reconnects uint64
	down       time.Duration // completed outages
	lostAt     time.Time     // start of the current outage, zero when up
	upAt       time.Time     // start of the current session
}

func newRedialer[C any](dial func(ctx context.Context) (C, error), stderr io.Writer, rnd *rand.Rand) *redialer[C] {
	return &redialer[C]{dial: dial, stderr: stderr, wait: newBackoff(rnd), upAt: time.Now()}
}

// redial reports the loss of the session (lost), then dials until it
// succeeds or ctx ends.
func (r *redialer[C]) redial(ctx context.Context, lost error) (C, error) {
	now := time.Now()
	stable := now.Sub(r.upAt) > redialStable
	if stable {
		r.wait.reset()
	}
	r.mu.Lock()
	r.lostAt = now
	r.mu.Unlock()
	var d time.Duration
	if !stable || !errors.As(lost, new(*quic.StatelessResetError)) {
		d = r.wait.wait()
	}
	// else: the server answered, having forgotten the connection (it
	// restarted with its --reset-key): the first attempt goes at once. Not
	// after a short session, lest a server that accepts and forgets at
	// once be redialed without pause.
	fmt.Fprintf(r.stderr, "satquic tunnel client: tunnel lost: %v; reconnecting in %v\n", lost, roundDelay(d))
	for {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			var zero C
			return zero, ctx.Err()
		case <-t.C:
		}
		c, err := r.dial(ctx)
		if err == nil {
			r.up()
			return c, nil
		}
		if ctx.Err() != nil {
			return c, ctx.Err()
		}
		d = r.wait.wait()
		fmt.Fprintf(r.stderr, "satquic tunnel client: reconnecting failed: %v; next attempt in %v\n", err, roundDelay(d))
	}
}

// up ends the current outage.
func (r *redialer[C]) up() {
	now := time.Now()
	r.mu.Lock()
	out := now.Sub(r.lostAt)
	r.down += out
	r.reconnects++
	r.lostAt, r.upAt = time.Time{}, now
	r.mu.Unlock()
	fmt.Fprintf(r.stderr, "satquic tunnel client: reconnected after %v\n", roundDelay(out))
}

// stats returns the reconnections so far and the time without a tunnel,
// the current outage included.
func (r *redialer[C]) stats() (reconnects uint64, down time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	down = r.down
	if !r.lostAt.IsZero() {
		down += time.Since(r.lostAt)
	}
	return r.reconnects, down
}

// roundDelay rounds a delay for printing: tenths of a second.
func roundDelay(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
