// Package coresim runs a sans-IO QUIC connection (package core) over the
// network simulator (package netsim) in virtual time. It is the one driver
// of a connection over netsim: package quicsim's experiments and core's own
// simulation tests both use it, so that a simulated connection is driven
// exactly as the real-time loop of package quic drives one over a socket:
//
//   - the datagrams that arrive, each with the ECN codepoint the path
//     delivered it with, are queued until the simulator polls the
//     endpoint, which happens at the same virtual time;
//   - a poll is one turn of core's calling protocol: Step with the queued
//     datagrams (which also runs the due timers), the application's turn
//     with the events the connection reported, NextDatagram until none is
//     left, each datagram sent with its codepoint, and NextTimer as the
//     time of the next poll.
//
// A server endpoint has no connection until the first datagram a callback
// accepts, as a listener would (the callback checks the Initial and
// creates the connection).
//
// coresim does not import core: core's internal tests use it, and Go
// forbids the cycle. It drives any connection with the methods of Conn,
// which *core.Conn has, with the event type as a type parameter; the
// datagram is package dgram's, which core.Datagram is too.
package coresim

import (
	"net/netip"
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/dgram"
)

// Conn is what coresim needs of a connection: core's calling protocol
// (*core.Conn), with E its event type.
type Conn[E any] interface {
	Step(now time.Duration, in []dgram.Datagram)
	PollEvent() (E, bool)
	NextDatagram(now time.Duration, buf []byte) (dgram.Datagram, bool)
	NextTimer(now time.Duration) (time.Duration, bool)
}

// Endpoint runs one connection as a netsim.ECNEndpoint. Its hooks are set
// before the simulation runs.
type Endpoint[C Conn[E], E any] struct {
	conn C
	live bool // conn is set
	// accept creates a server's connection (NewServer).
	accept func(now time.Duration, d dgram.Datagram) (C, bool)

	// App, if set, is the application's turn at each poll: after the
	// connection handled the datagrams and timers, with the events it
	// reported since the last poll; what the application writes goes
	// out in the same poll. events is reused from poll to poll.
	App func(now time.Duration, events []E)
	// Drop, if set, loses the arriving datagrams it reports true for
	// before the connection sees them, as a path that drops by content
	// or codepoint would.
	Drop func(d dgram.Datagram) bool
	// OnSend, if set, sees each datagram the connection sends.
	OnSend func(now time.Duration, d dgram.Datagram)

	in     []dgram.Datagram
	events []E
	out    []netsim.Datagram
}

// NewClient returns an endpoint that runs conn, a client connection whose
// first flight goes out when the simulator attaches the endpoint.
func NewClient[C Conn[E], E any](conn C) *Endpoint[C, E] {
	return &Endpoint[C, E]{conn: conn, live: true}
}

// NewServer returns an endpoint without a connection: the first datagram
// that accept takes creates it at the time it arrived, as a listener
// creates a connection for a client's first Initial, and is its first
// input. accept reports false to drop the datagram.
func NewServer[C Conn[E], E any](accept func(now time.Duration, d dgram.Datagram) (C, bool)) *Endpoint[C, E] {
	return &Endpoint[C, E]{accept: accept}
}

// Conn returns the connection, and whether there is one yet.
func (e *Endpoint[C, E]) Conn() (C, bool) { return e.conn, e.live }

// Receive is ReceiveECN for a datagram without a codepoint.
func (e *Endpoint[C, E]) Receive(now time.Duration, from netip.AddrPort, data []byte) {
	e.ReceiveECN(now, from, data, ecn.NotECT)
}

// ReceiveECN queues a datagram that arrived at now with codepoint cp for
// the next poll, which comes at the same time. The endpoint owns data.
func (e *Endpoint[C, E]) ReceiveECN(now time.Duration, from netip.AddrPort, data []byte, cp ecn.Codepoint) {
	d := dgram.Datagram{Addr: from, Data: data, ECN: cp}
	if e.Drop != nil && e.Drop(d) {
		return
	}
	if !e.live {
		if e.accept == nil {
			return
		}
		conn, ok := e.accept(now, d)
		if !ok {
			return
		}
		e.conn, e.live = conn, true
	}
	e.in = append(e.in, d)
}

// Poll runs one turn of the connection at now and returns its datagrams,
// addressed to the peer with their codepoints, and when it next needs a
// turn.
func (e *Endpoint[C, E]) Poll(now time.Duration) ([]netsim.Datagram, time.Duration, bool) {
	if !e.live {
		return nil, 0, false
	}
	e.conn.Step(now, e.in)
	clear(e.in) // the connection keeps no datagram
	e.in = e.in[:0]
	e.events = e.events[:0]
	for {
		ev, ok := e.conn.PollEvent()
		if !ok {
			break
		}
		e.events = append(e.events, ev)
	}
	if e.App != nil {
		e.App(now, e.events)
	}
	e.out = e.out[:0]
	for {
		d, ok := e.conn.NextDatagram(now, nil)
		if !ok {
			break
		}
		if e.OnSend != nil {
			e.OnSend(now, d)
		}
		e.out = append(e.out, netsim.Datagram{To: d.Addr, Data: d.Data, ECN: d.ECN})
	}
	next, ok := e.conn.NextTimer(now)
	return e.out, next, ok
}
