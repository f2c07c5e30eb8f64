package quic

import "sync/atomic"

// ListenerStats is what a Listener holds now and what its limits did
// since it started: the clients refused and why, the connections evicted
// to make room, and the Retry packets sent (listener_admit.go).
type ListenerStats struct {
	// Handshakes and Established are the connections held now, in
	// handshake and with the handshake complete (Accept-ed or not);
	// AcceptQueue those of Established that Accept has not taken.
	Handshakes, Established, AcceptQueue int
	// Refused counts the clients refused with CONNECTION_REFUSED, by
	// the limit they met.
	Refused RefusedStats
	// InvalidTokens counts the Initials refused with INVALID_TOKEN: a
	// token that did not validate (RFC 9000 section 8.1.2).
	InvalidTokens uint64
	// Evicted counts the connections that gave their places to new
	// clients.
	Evicted EvictedStats
	// RetriesSent counts the Retry packets sent (RFC 9000 section 8.1.2):
	// for Config.RequireAddressValidation, too many handshakes with
	// unvalidated clients, or a source at its share of them.
	RetriesSent uint64
}

// RefusedStats counts refused clients by the limit they met.
type RefusedStats struct {
	// Handshakes: MaxHandshakes handshakes in progress, none of them
	// evictable.
	Handshakes uint64
	// HandshakesPerIP: the source's MaxHandshakesPerIP handshakes with a
	// token that proved its address (a source at its share without one
	// gets a Retry instead).
	HandshakesPerIP uint64
	// Connections: MaxConnections connections, none evictable.
	Connections uint64
	// ConnectionsPerIP: the source's MaxConnectionsPerIP connections.
	ConnectionsPerIP uint64
	// AcceptQueue: the application leaves too many connections waiting
	// for Accept.
	AcceptQueue uint64
}

// Total is the number of clients refused.
func (r RefusedStats) Total() uint64 {
	return r.Handshakes + r.HandshakesPerIP + r.Connections + r.ConnectionsPerIP + r.AcceptQueue
}

// EvictedStats counts connections evicted to make room for new clients.
type EvictedStats struct {
	// SilentHandshakes: handshakes from which nothing arrived for a
	// probe timeout.
	SilentHandshakes uint64
	// BusyHandshakes: handshakes that kept sending without completing,
	// older than the bound of listener_age.go.
	BusyHandshakes uint64
	// IdleConnections: established connections idle for half the idle
	// timeout.
	IdleConnections uint64
}

// Total is the number of connections evicted.
func (e EvictedStats) Total() uint64 {
	return e.SilentHandshakes + e.BusyHandshakes + e.IdleConnections
}

// refusal is the limit a refused client met.
type refusal uint8

const (
	refusedNone refusal = iota
	refusedHandshakes
	refusedHandshakesPerIP
	refusedConns
	refusedConnsPerIP
	refusedAcceptQueue
	numRefusals
)

// evictionKind is why a connection gave its places.
type evictionKind uint8

const (
	evictedSilentHandshake evictionKind = iota
	evictedBusyHandshake
	evictedIdleConn
	numEvictionKinds
)

// listenerCounters are the counters of ListenerStats. They are atomic:
// refusals and evictions are counted under the Listener's mutex, Retry
// packets and invalid tokens by the reader without it.
type listenerCounters struct {
	refused       [numRefusals]atomic.Uint64
	evicted       [numEvictionKinds]atomic.Uint64
	retries       atomic.Uint64
	invalidTokens atomic.Uint64
}

// Stats returns what the Listener holds and the counters of its limits.
func (l *Listener) Stats() ListenerStats {
	l.mu.Lock()
	st := ListenerStats{Handshakes: l.handshakes.len(), Established: l.established.len(), AcceptQueue: len(l.queue)}
	l.mu.Unlock()
	c := &l.counters
	st.Refused = RefusedStats{
		Handshakes:       c.refused[refusedHandshakes].Load(),
		HandshakesPerIP:  c.refused[refusedHandshakesPerIP].Load(),
		Connections:      c.refused[refusedConns].Load(),
		ConnectionsPerIP: c.refused[refusedConnsPerIP].Load(),
		AcceptQueue:      c.refused[refusedAcceptQueue].Load(),
	}
	st.Evicted = EvictedStats{
		SilentHandshakes: c.evicted[evictedSilentHandshake].Load(),
		BusyHandshakes:   c.evicted[evictedBusyHandshake].Load(),
		IdleConnections:  c.evicted[evictedIdleConn].Load(),
	}
	st.RetriesSent = c.retries.Load()
	st.InvalidTokens = c.invalidTokens.Load()
	return st
}

// refuse counts a refusal, if why is one.
func (c *listenerCounters) refuse(why refusal) {
	if why != refusedNone {
		c.refused[why].Add(1)
	}
}
