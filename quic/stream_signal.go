package quic

import "sync"

// streamSignal is the broadcast of one direction of a stream, which its
// Read or Write waits on. A call without a deadline, nearly every one,
// sleeps on cond, which releases the connection's mutex while it sleeps
// and allocates nothing; a channel made for each wait cost a load
// generator one allocation per request, and its creation and close
// about 2% of its CPU. A call with a deadline waits on the channel of
// ch instead, as it selects on the deadline's channel too. fire wakes
// both kinds.
type streamSignal struct {
	cond sync.Cond // L is the connection's mutex
	ch   broadcast
}

// fire wakes every waiting call; the connection's mutex is held.
func (s *streamSignal) fire() {
	s.cond.Broadcast()
	s.ch.fire()
}

// waitLocked waits, with the connection's mutex held, until fire, or
// until the deadline passes or the connection closes when a deadline
// was set; it returns with the mutex held. The caller looks at its
// condition again: a wake-up does not say that it holds. A deadline set
// while the call sleeps on cond fires the signal
// (streamState.setReadDeadline), and the call then waits on the channel.
func (s *streamSignal) waitLocked(dl *deadline, closed <-chan struct{}) {
	dch := dl.wait()
	if dch == nil {
		s.cond.Wait()
		return
	}
	wait := s.ch.wait()
	s.cond.L.Unlock()
	select {
	case <-wait:
	case <-dch:
	case <-closed:
	}
	s.cond.L.Lock()
}
