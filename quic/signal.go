package quic

import (
	"sync"
	"sync/atomic"
	"time"
)

// broadcast wakes every goroutine waiting for a condition guarded by its
// owner's mutex: a waiter checks the condition and takes wait() under the
// mutex, then waits on the channel without it; whoever changes the
// condition calls fire() under the mutex. No wake-up can be lost between
// the check and the wait, and nothing is allocated while nobody waits.
type broadcast struct {
	ch chan struct{}
}

func (b *broadcast) wait() <-chan struct{} {
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

func (b *broadcast) fire() {
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}

// deadline is a settable point in time whose channel closes when it
// passes, so that a blocked Read or Write can select on it and a new
// deadline applies to calls already waiting (as net.Conn requires).
type deadline struct {
	mu    sync.Mutex
	timer *time.Timer
	gen   uint64 // which set armed the timer
	ch    chan struct{}
	// expired: ch is closed. Written under mu, read without it by
	// passed, which every Read and Write calls.
	expired atomic.Bool
}

// set moves the deadline; the zero time means none.
func (d *deadline) set(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.gen++
	if d.ch == nil || d.expired.Load() {
		d.ch = make(chan struct{})
		d.expired.Store(false)
	}
	if t.IsZero() {
		return
	}
	wait := time.Until(t)
	if wait <= 0 {
		close(d.ch)
		d.expired.Store(true)
		return
	}
	gen := d.gen
	d.timer = time.AfterFunc(wait, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		// A later set has replaced this timer if gen moved on.
		if d.gen == gen && !d.expired.Load() {
			close(d.ch)
			d.expired.Store(true)
		}
	})
}

// wait returns a channel that is closed once the deadline passed, or nil
// while no deadline was ever set: a stream's Read and Write wait with no
// deadline most of the time, and a channel each time they wait cost an
// allocation per request. The stream wakes a call waiting without a
// channel when a deadline is set (streamState.setReadDeadline), and the
// call takes the channel then.
func (d *deadline) wait() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ch
}

// passed reports whether the deadline passed.
func (d *deadline) passed() bool { return d.expired.Load() }

// stop disarms the timer of a stream side that is finished.
func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	d.gen++
}
