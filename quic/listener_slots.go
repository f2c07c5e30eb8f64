package quic

import (
	"container/list"
	"net/netip"
	"sync/atomic"
	"time"
)

// connSlot is a server connection's place in its Listener's limits: in
// the queue of handshakes or in that of established connections, and in
// its source's counts. The Listener's mutex guards it, but for the
// counters the reader and the connection goroutine use without it.
type connSlot struct {
	c         *Conn // set by the reader once the connection exists
	source    netip.Prefix
	validated bool // a token proved the client's address
	state     slotState
	elem      *list.Element // in the queue of its state
	// placed is when the slot took its place at the back of its queue,
	// and seen what heard was then: while heard has not moved, the
	// connection has been silent since placed.
	placed time.Duration
	seen   uint64
	// admitted is when a handshake took its place, and ageElem its
	// element in the order of admission (listener_age.go).
	admitted time.Duration
	ageElem  *list.Element
	// heard counts the datagrams the reader routed to the connection.
	heard atomic.Uint64
	// evicted tells the connection goroutine to end: the Listener gave
	// its places to a new client.
	evicted atomic.Bool
}

type slotState uint8

const (
	slotHandshake slotState = iota
	slotEstablished
	slotGone // left the limits: ended, or evicted
)

// slotQueue holds the slots of one state, the earliest placed at the
// front. Finding the one silent the longest follows the CLOCK algorithm:
// a slot at the front that was heard from since placed goes to the back
// as if placed now, so that the search costs O(1) amortized and, unlike
// a queue kept in order of last datagram, the reader only counts
// datagrams.
type slotQueue struct {
	l list.List
}

// maxSweep bounds the slots one search moves, so that a new client's
// Initial costs little even when every connection is busy; the next
// search goes on from there.
const maxSweep = 64

func (q *slotQueue) len() int { return q.l.Len() }

// push places s at the back.
func (q *slotQueue) push(s *connSlot, now time.Duration) {
	s.placed, s.seen = now, s.heard.Load()
	s.elem = q.l.PushBack(s)
}

func (q *slotQueue) remove(s *connSlot) {
	q.l.Remove(s.elem)
	s.elem = nil
}

// silentFor returns the slot silent the longest if it was silent for d
// or more, or nil. Silence is counted from when a slot was placed, so it
// is never overestimated.
func (q *slotQueue) silentFor(d, now time.Duration) *connSlot {
	for range min(q.l.Len(), maxSweep) {
		e := q.l.Front()
		s := e.Value.(*connSlot)
		if h := s.heard.Load(); h != s.seen {
			q.l.MoveToBack(e)
			s.placed, s.seen = now, h
			continue
		}
		if now-s.placed >= d {
			return s
		}
		// Every slot behind was placed later.
		return nil
	}
	return nil
}
