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
	// spare holds the waiters of calls that returned, for the next calls
	// to wait on: a load generator with more requests than the peer's
	// stream credit waits here once per request, and a waiter and its
	// channel made each time were two allocations of it.
	spare []*openWaiter
}

// openWaiter is a waiting call's place in line.
type openWaiter struct {
	// ready gets a token when the call may look again. It holds one, so
	// that wake never blocks, and is empty whenever the waiter is in the
	// line or among the spares: a waiter is woken once per wait, and
	// every token is taken, by the wait or when the call gives up.
	ready chan struct{}
}

// getWaiter returns a waiter with an empty channel; c.mu is held.
func (q *openQueue) getWaiter() *openWaiter {
	if n := len(q.spare); n > 0 {
		w := q.spare[n-1]
		q.spare[n-1] = nil
		q.spare = q.spare[:n-1]
		return w
	}
	return &openWaiter{ready: make(chan struct{}, 1)}
}

// putWaiter keeps the waiter of a call that returned, its channel empty;
// c.mu is held.
func (q *openQueue) putWaiter(w *openWaiter) { q.spare = append(q.spare, w) }

// wake wakes up to n calls at the head of the line (every call when n is
// negative).
func (q *openQueue) wake(n int) {
	k := len(q.waiting)
	if n >= 0 {
		k = min(k, n)
	}
	for _, w := range q.waiting[:k] {
		w.ready <- struct{}{}
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
			if w != nil {
				q.putWaiter(w)
			}
			c.mu.Unlock()
			return s, err
		}
		if handshake != nil {
			// Before the handshake the peer's limits are not known.
			if w != nil {
				q.putWaiter(w)
				w = nil
			}
			c.mu.Unlock()
			select {
			case <-handshake:
			case <-c.closed:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		}
		if w != nil {
			// Woken, and another call took the credit first: back to
			// the head of the line.
			q.waiting = slices.Insert(q.waiting, 0, w)
		} else {
			w = q.getWaiter()
			q.waiting = append(q.waiting, w)
		}
		c.mu.Unlock()
		if !c.waitInLine(ctx, q, w, bidi) {
			return nil, ctx.Err()
		}
	}
}

// waitInLine waits until w is woken, or until ctx ends: then w leaves
// the line, back among the spares, and waitInLine returns false.
func (c *Conn) waitInLine(ctx context.Context, q *openQueue, w *openWaiter, bidi bool) bool {
	done := ctx.Done()
	if done == nil {
		// A receive alone costs less than a select.
		<-w.ready
		return true
	}
	select {
	case <-w.ready:
		return true
	case <-done:
	}
	c.mu.Lock()
	if !q.remove(w) {
		// Woken meanwhile: the token is there to take, and the credit
		// goes to the next call.
		<-w.ready
		q.woken--
		c.wakeOpenersLocked(bidi)
	}
	q.putWaiter(w)
	c.mu.Unlock()
	return false
}
