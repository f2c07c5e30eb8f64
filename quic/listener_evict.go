package quic

import "github.com/satquic/satquic/quic/internal/core"

// eviction is a connection that lost its places to a new client.
type eviction struct {
	c         *Conn
	handshake bool
}

// evictLocked frees the places of s, if any, at once, counts it as kind,
// and returns the connection to end; l.mu is held.
func (l *Listener) evictLocked(s *connSlot, kind evictionKind) eviction {
	if s == nil {
		return eviction{}
	}
	l.counters.evicted[kind].Add(1)
	ev := eviction{c: s.c, handshake: s.state == slotHandshake}
	l.takeOut(s)
	return ev
}

// run ends the evicted connection, if any. A handshake gets a
// CONNECTION_CLOSE, so that a slow client stops at once; an established
// connection ends as an idle timeout would, silently (RFC 9000 section
// 10.1), and the peer learns it from a Stateless Reset when it next sends
// (section 10.3). Either way the connection goroutine then ends without
// the closing period, so that evictions cannot pile up connections
// waiting it out; the cost, as section 10.2 says, is a Stateless Reset
// for a packet that arrives late.
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
