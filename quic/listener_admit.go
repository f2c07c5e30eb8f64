package quic

import (
	"net/netip"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
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
func (l *Listener) admit(from netip.AddrPort, validated bool, now time.Duration) (admission, *connSlot, eviction) {
	l.mu.Lock()
	defer l.mu.Unlock()
	src := sourceOf(from)
	if a := l.refusal(src, validated); a != admitted {
		return a, nil, eviction{}
	}
	victim, ok := l.makeRoom(now)
	if !ok {
		return admitFull, nil, eviction{}
	}
	ev := l.evictLocked(victim)
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
	return admitted, s, ev
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

// eviction is a connection that lost its places to a new client.
type eviction struct {
	c         *Conn
	handshake bool
}

// evictLocked frees the places of s, if any, at once, and returns the
// connection to end; l.mu is held.
func (l *Listener) evictLocked(s *connSlot) eviction {
	if s == nil {
		return eviction{}
	}
	ev := eviction{c: s.c, handshake: s.state == slotHandshake}
	l.takeOut(s)
	return ev
}

// run ends the evicted connection, if any. A handshake gets a
// CONNECTION_CLOSE, so that a slow client stops at once; an established
// connection ends as an idle timeout would, silently (RFC 9000 section
// 10.1), and the peer learns it from a Stateless Reset when it next sends
// (section 10.3). Either way the connection goroutine then ends without
// the closing period (section 10.2 allows discarding the state early), so
// that evictions cannot pile up connections waiting out their closing.
// It takes the connection's lock: no lock of the Transport or Listener
// may be held.
func (ev *eviction) run() {
	c := ev.c
	if c == nil {
		return
	}
	if ev.handshake {
		c.closeLocal(0, "")
	} else {
		c.mu.Lock()
		c.setClosedLocked(core.ErrIdleTimeout)
		c.mu.Unlock()
	}
	c.slot.evicted.Store(true)
	c.signal()
}

// evicted reports whether the Listener evicted the connection: its
// goroutine ends.
func (c *Conn) evicted() bool {
	return c.slot != nil && c.slot.evicted.Load()
}

// heard counts a datagram the reader routes to the connection, which
// tells the Listener that it is not silent.
func (c *Conn) heard() {
	if c != nil && c.slot != nil {
		c.slot.heard.Add(1)
	}
}
