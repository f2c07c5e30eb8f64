package quic

import (
	"context"
	"errors"
	"slices"
)

// The calls of OpenStreamSync and OpenUniStreamSync that wait for the
// peer's stream credit (MAX_STREAMS, RFC 9000 section 4.6) wait in line,
// one line per stream type: each MAX_STREAMS wakes as many calls at the
// head as it lets open streams, and each waits on a channel of its own.
// A broadcast to every waiting call at each MAX_STREAMS, nearly all of
// them in vain with a hundred requests waiting, cost more than the
// requests; and one channel for all, or a select on the connection's
// closed channel, made them contend for its lock.

// openQueue is one stream type's line; the connection's mutex guards it.
type openQueue struct {
	waiting []*openWaiter
	// woken counts the calls woken that have not looked again yet: the
	// credit they will take is not offered to others.
	woken int
}

// openWaiter is a waiting call.
type openWaiter struct {
	ready chan struct{} // closed when the call may look again
}

// wake wakes up to n calls at the head of the line (every call when n is
// negative).
func (q *openQueue) wake(n int) {
	k := len(q.waiting)
	if n >= 0 {
		k = min(k, n)
	}
	for _, w := range q.waiting[:k] {
		close(w.ready)
	}
	q.woken += k
	rest := copy(q.waiting, q.waiting[k:])
	clear(q.waiting[rest:])
	q.waiting = q.waiting[:rest]
}

// remove takes w out of the line; false if it was woken already.
func (q *openQueue) remove(w *openWaiter) bool {
	i := slices.Index(q.waiting, w)
	if i < 0 {
		return false
	}
	q.waiting = slices.Delete(q.waiting, i, i+1)
	return true
}

// wakeOpenersLocked wakes as many waiting calls as the peer's credit lets
// open streams of the type now, less the calls woken already; c.mu is
// held.
func (c *Conn) wakeOpenersLocked(bidi bool) {
	q := &c.opening[dirIndex(bidi)]
	if len(q.waiting) == 0 {
		return
	}
	n := c.core.StreamsOpenable(bidi)
	if n <= uint64(q.woken) {
		return
	}
	q.wake(int(min(n-uint64(q.woken), uint64(len(q.waiting)))))
}

// wakeAllOpenersLocked wakes every waiting call: the connection ended.
func (c *Conn) wakeAllOpenersLocked() {
	c.opening[0].wake(-1)
	c.opening[1].wake(-1)
}

// openSync opens a stream, waiting in line for the peer's credit.
func (c *Conn) openSync(ctx context.Context, bidi bool) (*streamState, error) {
	q := &c.opening[dirIndex(bidi)]
	var w *openWaiter // the call's place in line, once it waited
	for {
		c.mu.Lock()
		if w != nil {
			q.woken--
		}
		var s *streamState
		var handshake <-chan struct{}
		var err error
		if w == nil && len(q.waiting) > 0 && c.err == nil {
			// Calls that waited before this one open first.
			err = ErrStreamLimit
		} else {
			s, handshake, err = c.openLocked(bidi)
		}
		if !errors.Is(err, ErrStreamLimit) {
			c.mu.Unlock()
			return s, err
		}
		if handshake != nil {
			// Before the handshake the peer's limits are not known.
			c.mu.Unlock()
			select {
			case <-handshake:
			case <-c.closed:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		}
		again := w != nil
		w = &openWaiter{ready: make(chan struct{})}
		if again {
			// Woken, and another call took the credit first: back to
			// the head of the line.
			q.waiting = slices.Insert(q.waiting, 0, w)
		} else {
			q.waiting = append(q.waiting, w)
		}
		c.mu.Unlock()
		select {
		case <-w.ready:
		case <-ctx.Done():
			c.mu.Lock()
			if !q.remove(w) {
				// Woken meanwhile: the credit goes to the next call.
				q.woken--
				c.wakeOpenersLocked(bidi)
			}
			c.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}
