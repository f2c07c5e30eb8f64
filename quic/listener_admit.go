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
	if a := l.refusal(src, validated); a != admitted {
		return a, nil, eviction{}
	}
	victim, ok := l.makeRoom(now)
	if !ok {
		return admitFull, nil, eviction{}
	}
	ev := l.evictLocked(victim)
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
// 9000 section 8.1), which get a Retry; l.mu is held.
func (l *Listener) refusal(src netip.Prefix, validated bool) admission {
	switch {
	case l.err != nil:
		return admitNone
	case len(l.queue) >= maxAcceptQueue:
		return admitFull
	}
	if u := l.sources[src]; u != nil {
		switch {
		case u.handshakes[validIndex(validated)] < l.limits.handshakesPerIP:
		case validated:
			return admitFull
		default:
			// A Retry costs nothing, and the client, if real, comes
			// back among the validated, which Initials with a forged
			// source address cannot fill.
			return admitRetry
		}
		if u.conns >= l.limits.connsPerIP {
			return admitFull
		}
	}
	if !validated && l.unvalidated >= maxUnvalidatedHandshakes {
		return admitRetry
	}
	return admitted
}

// makeRoom finds the slot a new handshake replaces when the handshakes or
// the connections are at their limit: the handshake silent the longest,
// or else the connection idle the longest. It reports false when nothing
// may go; l.mu is held.
func (l *Listener) makeRoom(now time.Duration) (*connSlot, bool) {
	hsFull := l.handshakes.len() >= l.limits.handshakes
	if !hsFull && l.handshakes.len()+l.established.len() < l.limits.conns {
		return nil, true
	}
	if s := l.handshakes.silentFor(l.limits.handshakeSilence, now); s != nil {
		return s, true
	}
	if hsFull {
		return nil, false
	}
	s := l.established.silentFor(l.limits.idleEviction, now)
	return s, s != nil
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
