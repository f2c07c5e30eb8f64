package quic

import (
	"net/netip"
	"time"
)

// admission is the Listener's answer to a client's first Initial.
type admission int

const (
	admitted   admission = iota
	admitNone            // the Listener closed: the Initial is dropped
	admitFull            // a limit is reached: CONNECTION_REFUSED
	admitRetry           // the client must prove its address first
)

// maxAcceptQueue bounds the connections whose handshake completed that
// Accept has not taken: beyond it, the application does not keep up and
// new clients are refused rather than left waiting.
const maxAcceptQueue = 1024

// admit decides on a new client at from, validated when a token proved its
// address. Admitted, it gets a slot among the handshakes, and the
// connection whose places it takes, if any, is returned for the caller to
// evict once it holds no lock of the Transport.
func (l *Listener) admit(from netip.AddrPort, validated bool) (admission, *connSlot, eviction) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Read under the lock, so that the queues stay in order of time.
	now := l.t.now()
	src := sourceOf(from)
	if a, why := l.refusal(src, validated); a != admitted {
		l.counters.refuse(why)
		return a, nil, eviction{}
	}
	victim, kind, why := l.makeRoom(now)
	if why != refusedNone {
		l.counters.refuse(why)
		return admitFull, nil, eviction{}
	}
	ev := l.evictLocked(victim, kind)
	return admitted, l.place(src, validated, now), ev
}

// place gives a new handshake its slot and counts it; l.mu is held.
func (l *Listener) place(src netip.Prefix, validated bool, now time.Duration) *connSlot {
	s := &connSlot{source: src, validated: validated}
	l.handshakes.push(s, now)
	u := l.sources[src]
	if u == nil {
		u = &sourceUse{}
		l.sources[src] = u
	}
	u.handshakes[validIndex(validated)]++
	u.conns++
	if !validated {
		l.unvalidated++
	}
	return s
}

// refusal applies the limits that no eviction lifts: the accept queue,
// the client's source, and the handshakes with unvalidated clients (RFC
// 9000 section 8.1), which get a Retry. A refusal says which limit was
// met; l.mu is held.
func (l *Listener) refusal(src netip.Prefix, validated bool) (admission, refusal) {
	switch {
	case l.err != nil:
		return admitNone, refusedNone
	case len(l.queue) >= maxAcceptQueue:
		return admitFull, refusedAcceptQueue
	}
	if u := l.sources[src]; u != nil {
		switch {
		case u.handshakes[validIndex(validated)] < l.limits.handshakesPerIP:
		case validated:
			return admitFull, refusedHandshakesPerIP
		default:
			// A Retry costs nothing, and the client, if real, comes
			// back among the validated, which Initials with a forged
			// source address cannot fill.
			return admitRetry, refusedNone
		}
		if u.conns >= l.limits.connsPerIP {
			return admitFull, refusedConnsPerIP
		}
	}
	if !validated && l.unvalidated >= l.limits.unvalidated {
		return admitRetry, refusedNone
	}
	return admitted, refusedNone
}

// makeRoom finds the slot a new handshake replaces when the handshakes or
// the connections are at their limit: the handshake silent the longest,
// or else the connection idle the longest (when the handshakes are not
// at theirs), or else the oldest handshake if it is old enough that it
// no longer counts as in progress (listener_age.go). When nothing may
// go, it returns the limit met; l.mu is held.
func (l *Listener) makeRoom(now time.Duration) (*connSlot, evictionKind, refusal) {
	hsFull := l.handshakes.len() >= l.limits.handshakes
	if !hsFull && l.handshakes.len()+l.established.len() < l.limits.conns {
		return nil, 0, refusedNone
	}
	if s := l.handshakes.silentFor(l.limits.handshakeSilence, now); s != nil {
		return s, evictedSilentHandshake, refusedNone
	}
	if !hsFull {
		if s := l.established.silentFor(l.limits.idleEviction, now); s != nil {
			return s, evictedIdleConn, refusedNone
		}
	}
	if s := l.handshakes.olderThan(l.limits.handshakeBusyAge, now); s != nil {
		return s, evictedBusyHandshake, refusedNone
	}
	if hsFull {
		return nil, 0, refusedHandshakes
	}
	return nil, 0, refusedConns
}

// establish moves a slot whose handshake completed among the established
// connections; l.mu is held.
func (l *Listener) establish(s *connSlot, now time.Duration) {
	l.handshakes.remove(s)
	l.sources[s.source].handshakes[validIndex(s.validated)]--
	s.state = slotEstablished
	l.established.push(s, now)
}

// leave takes a connection that ended out of the limits.
func (l *Listener) leave(s *connSlot) {
	l.mu.Lock()
	l.takeOut(s)
	l.mu.Unlock()
}

// takeOut frees a slot's places; a slot already out stays so. l.mu is
// held.
func (l *Listener) takeOut(s *connSlot) {
	u := l.sources[s.source]
	switch s.state {
	case slotHandshake:
		l.handshakes.remove(s)
		u.handshakes[validIndex(s.validated)]--
	case slotEstablished:
		l.established.remove(s)
	default:
		return
	}
	s.state = slotGone
	if u.conns--; u.empty() {
		delete(l.sources, s.source)
	}
}
