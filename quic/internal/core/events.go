package core

import (
	"fmt"

	"github.com/satquic/satquic/quic/internal/wire"
)

// EventKind says what an Event reports.
type EventKind uint8

// The events a Conn reports through PollEvent.
const (
	// EventHandshakeComplete: the TLS handshake completed (RFC 9001
	// section 4.1.1); streams may be opened.
	EventHandshakeComplete EventKind = iota + 1
	// EventHandshakeConfirmed: the handshake is confirmed (section
	// 4.1.2); the handshake keys are gone.
	EventHandshakeConfirmed
	// EventStreamOpened: the peer opened StreamID.
	EventStreamOpened
	// EventStreamReadable: StreamRead on StreamID returns data, the end
	// of the stream, or the peer's reset.
	EventStreamReadable
	// EventStreamWritable: StreamWrite on StreamID accepts more data, or
	// fails because the peer sent STOP_SENDING.
	EventStreamWritable
	// EventStreamsAvailable: the peer raised its stream limit; OpenStream
	// may succeed again. Bidi says which type.
	EventStreamsAvailable
	// EventConnIDIssued: ConnID now routes to this connection (a driver
	// updates its demultiplexing table).
	EventConnIDIssued
	// EventConnIDRetired: ConnID no longer routes to this connection.
	EventConnIDRetired
	// EventClosed: the connection is closing, draining or closed; Err
	// says why (a *ConnError, ErrIdleTimeout, ErrHandshakeTimeout or
	// ErrStatelessReset). It is the last event.
	EventClosed
	// EventEarlyDataRejected: the server refused this client's 0-RTT
	// data; it is sent again in 1-RTT packets, and the streams go on.
	EventEarlyDataRejected
	// EventDatagramReceived: ReceiveDatagram has a datagram, the first
	// since it last reported none.
	EventDatagramReceived
	// EventPeerAddressChanged: the peer's address, where datagrams go,
	// changed (RemoteAddr): the peer moved, or the path went back to
	// the last validated address (path.go).
	EventPeerAddressChanged
	// EventPathMigrated: a client's probe of a new local address was
	// answered and the connection moved there; the driver sends the
	// next datagrams from it (migration.go).
	EventPathMigrated
	// EventPathProbeFailed: a client's probe of a new local address got
	// no answer in time, or could not go on; Err says why. The
	// connection stays where it was.
	EventPathProbeFailed
	// EventPreferredAddressUsed: at a server with a preferred address
	// (Config.PreferredIPv4, PreferredIPv6), the client's newest
	// non-probing packet came to it; the driver sends every datagram
	// from that address from now on (RFC 9000 section 9.6.1).
	EventPreferredAddressUsed
)

func (k EventKind) String() string {
	names := [...]string{"", "handshake-complete", "handshake-confirmed", "stream-opened",
		"stream-readable", "stream-writable", "streams-available", "connid-issued",
		"connid-retired", "closed", "early-data-rejected", "datagram-received",
		"peer-address-changed",
		"path-migrated", "path-probe-failed", "preferred-address-used"}
	if int(k) < len(names) && k != 0 {
		return names[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is something the application or the driver should act on.
type Event struct {
	Kind     EventKind
	StreamID uint64
	Bidi     bool
	ConnID   wire.ConnectionID
	Err      error
}

// eventQueue is a FIFO of events. Stream readiness events are coalesced
// through flags on the stream, so the queue holds at most one readable and
// one writable event per stream.
type eventQueue struct {
	q    []Event
	head int
}

func (e *eventQueue) push(ev Event) { e.q = append(e.q, ev) }

func (e *eventQueue) pop() (Event, bool) {
	if e.head == len(e.q) {
		return Event{}, false
	}
	ev := e.q[e.head]
	e.q[e.head] = Event{}
	e.head++
	if e.head == len(e.q) {
		e.q, e.head = e.q[:0], 0
	}
	return ev, true
}
