package quic

import (
	"container/list"
	"time"
)

// handshakeQueue holds the slots of the handshakes in progress: the
// slotQueue in which the one silent the longest is found, and beside it
// the same slots in the order they were admitted, in which the oldest is.
//
// RFC 9000 says nothing of a server evicting handshakes. Silence alone
// would let an attacker keep the handshakes it opened: a datagram every
// probe timeout, junk or not, from a few thousand sockets spread over the
// sources it needs to pass MaxHandshakesPerIP (IPv6 /64s are cheap), holds
// every place for the whole handshake timeout (20 s by default) at a few
// hundred bytes per second per handshake, and refuses everyone else.
// So under pressure a handshake that kept sending is evicted too, the
// oldest first, once it is older than handshakeBusyAge: a handshake
// lasts a few round trips, and a client that completes none in that time
// is either not trying or on a path so lossy that it had better retry.
// The attacker then has to open all its handshakes again every
// handshakeBusyAge, a flood of Initials that per-source limits and
// Retry make visible, instead of a trickle; and the oldest-first order
// gives a legitimate client that got in at least that long to complete.
type handshakeQueue struct {
	slotQueue
	byAge list.List
}

// push places s at the back of both orders, admitted at now.
func (q *handshakeQueue) push(s *connSlot, now time.Duration) {
	q.slotQueue.push(s, now)
	s.admitted = now
	s.ageElem = q.byAge.PushBack(s)
}

func (q *handshakeQueue) remove(s *connSlot) {
	q.slotQueue.remove(s)
	q.byAge.Remove(s.ageElem)
	s.ageElem = nil
}

// olderThan returns the handshake admitted the earliest if it is d old or
// more, or nil.
func (q *handshakeQueue) olderThan(d, now time.Duration) *connSlot {
	e := q.byAge.Front()
	if e == nil {
		return nil
	}
	if s := e.Value.(*connSlot); now-s.admitted >= d {
		return s
	}
	return nil
}
