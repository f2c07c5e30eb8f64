package core

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"testing"
	"time"

	"net/netip"

	"github.com/satquic/satquic/internal/ecn"
)

// flight is a datagram on its way between the two ends of a pair, with
// the codepoint it was sent with: the pair's path carries ECN unchanged.
type flight struct {
	at       time.Duration
	toServer bool
	data     []byte
	ecn      ecn.Codepoint
	// addr is the client's address on the datagram: its source to the
	// server, its destination from the server.
	addr netip.AddrPort
	// from is the server's source address of a datagram to the client
	// (zero: serverAddr).
	from netip.AddrPort
}

// pair wires a client and a server Conn back to back with a fixed one-way
// delay, in virtual time: the scripted level of the tests, where hooks drop,
// delay and reorder chosen datagrams and answer for the server's listener.
// It drives both ends as every driver does (see the package
// documentation): Step with the datagrams due, then the applications, then
// NextDatagram until none is left, then NextTimer. drop may discard
// datagrams; apps drive streams at every step.
type pair struct {
	t      testing.TB
	now    time.Duration
	delay  time.Duration
	client *Conn
	server *Conn
	scfg   *Config

	flights []flight
	sent    [2]int // datagrams sent: [0] by the client, [1] by the server
	// drop reports whether to lose the n-th datagram of a direction.
	drop func(toServer bool, n int, data []byte) bool
	// extraDelay, if set, adds to the one-way delay of the n-th datagram
	// of a direction, which reorders datagrams.
	extraDelay func(toServer bool, n int, data []byte) time.Duration
	// listen, if set, stands for the server's listener until the server
	// Conn exists: for each datagram it may return a stateless reply
	// (Version Negotiation, Retry) and the parameters of the Conn to
	// create, or nil to create none.
	listen func(data []byte) (reply []byte, params *ServerParams)
	// onServer, if set, sees the server Conn when it is created.
	onServer func(c *Conn)
	// clientApp and serverApp run before each step, with its time.
	clientApp, serverApp func(now time.Duration, c *Conn)
	// events collects every event, per side.
	clientEvents, serverEvents []Event
	// sizes records the size of every datagram sent, per side.
	sizes [2][]int
	// ampCheck fails the test if the server sends more than three times
	// what it received before the client's address is validated.
	serverRecv, serverSent int
	// nat, if set, is the client's address as the server sees it at a
	// time, for a NAT that rebinds: the source of the client's datagrams
	// when they leave, and the only address whose datagrams from the
	// server reach the client when they arrive (others count in
	// natDropped).
	nat        func(now time.Duration) netip.AddrPort
	natDropped int
	// clientAlso is another address the client receives on, beside
	// nat's.
	clientAlso netip.AddrPort
	// onSent, if set, sees every datagram an end sends, before drop.
	onSent func(toServer bool, d Datagram)
	// in holds the datagrams due at each end in a step: [0] the client's,
	// [1] the server's.
	in [2][]Datagram
}

func newPair(t testing.TB, ccfg, scfg *Config, delay time.Duration) *pair {
	t.Helper()
	c, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatalf("NewClientConn: %v", err)
	}
	return &pair{t: t, delay: delay, client: c, scfg: scfg}
}

func (p *pair) flush(c *Conn, toServer bool) {
	dir := 1
	if toServer {
		dir = 0
	}
	for {
		d, ok := c.NextDatagram(p.now, nil)
		if !ok {
			return
		}
		n := p.sent[dir]
		p.sent[dir]++
		p.sizes[dir] = append(p.sizes[dir], len(d.Data))
		if p.onSent != nil {
			p.onSent(toServer, d)
		}
		if !toServer {
			p.serverSent += len(d.Data)
			if !p.server.amp.validated && p.serverSent > 3*p.serverRecv {
				p.t.Errorf("server sent %d bytes after receiving %d before address validation", p.serverSent, p.serverRecv)
			}
		}
		if p.drop != nil && p.drop(toServer, n, d.Data) {
			continue
		}
		at := p.now + p.delay
		if p.extraDelay != nil {
			at += p.extraDelay(toServer, n, d.Data)
		}
		addr, from := d.Addr, netip.AddrPort{}
		if toServer {
			addr = p.clientAddrAt(p.now)
		} else {
			from = p.serverSource()
		}
		p.enqueue(flight{at: at, toServer: toServer, data: d.Data, ecn: d.ECN, addr: addr, from: from})
	}
}

// deliver queues a flight that arrived for its end's next Step; the first
// one the listener accepts creates the server.
func (p *pair) deliver(f flight) {
	if !f.toServer {
		if p.nat != nil && f.addr != p.nat(p.now) && f.addr != p.clientAlso {
			p.natDropped++
			return
		}
		from := f.from
		if !from.IsValid() {
			from = serverAddr
		}
		p.in[0] = append(p.in[0], Datagram{Addr: from, Data: f.data, ECN: f.ecn})
		return
	}
	if p.server == nil {
		params, ok := p.listenDefault(f.data)
		if !ok {
			return
		}
		var err error
		p.server, err = NewServerConn(p.scfg, p.now, params)
		if err != nil {
			p.t.Fatalf("NewServerConn: %v", err)
		}
		if p.onServer != nil {
			p.onServer(p.server)
		}
	}
	p.serverRecv += len(f.data)
	p.in[1] = append(p.in[1], Datagram{Addr: f.addr, Data: f.data, ECN: f.ecn})
}

// serverSource is the address the server sends from, as package quic's
// driver does: its first socket's until the core reports that the client
// uses its preferred address, that address's after.
func (p *pair) serverSource() netip.AddrPort {
	if hasEvent(p.serverEvents, EventPreferredAddressUsed) {
		if pa := p.server.localParams.PreferredAddress; pa != nil && pa.IPv4.IsValid() {
			return pa.IPv4
		}
	}
	return serverAddr
}

// clientAddrAt is the client's address as the server sees it at now.
func (p *pair) clientAddrAt(now time.Duration) netip.AddrPort {
	if p.nat != nil {
		return p.nat(now)
	}
	return clientAddr
}

// enqueue adds a flight; flights stay sorted by arrival time, in sending
// order among equals.
func (p *pair) enqueue(f flight) {
	i := len(p.flights)
	for i > 0 && p.flights[i-1].at > f.at {
		i--
	}
	p.flights = slices.Insert(p.flights, i, f)
}

// listenDefault runs the listen hook, or accepts any datagram PeekInitial
// accepts.
func (p *pair) listenDefault(data []byte) (ServerParams, bool) {
	if p.listen != nil {
		p.serverRecv += len(data)
		reply, params := p.listen(data)
		if reply != nil {
			p.serverSent += len(reply)
			p.sizes[1] = append(p.sizes[1], len(reply))
			p.enqueue(flight{at: p.now + p.delay, data: reply})
		}
		if params == nil {
			return ServerParams{}, false
		}
		p.serverRecv -= len(data)
		return *params, true
	}
	info, err := PeekInitial(data)
	if err != nil {
		return ServerParams{}, false
	}
	return ServerParams{RemoteAddr: clientAddr, OriginalDestConnID: info.DstConnID, Version: info.Version}, true
}

func (p *pair) collectEvents() {
	for {
		ev, ok := p.client.PollEvent()
		if !ok {
			break
		}
		p.clientEvents = append(p.clientEvents, ev)
	}
	for p.server != nil {
		ev, ok := p.server.PollEvent()
		if !ok {
			break
		}
		p.serverEvents = append(p.serverEvents, ev)
	}
}

// step runs the applications, sends what both ends have, then advances
// to the next arrival or timer. It reports false when nothing is left.
func (p *pair) step() bool {
	if p.clientApp != nil {
		p.clientApp(p.now, p.client)
	}
	if p.serverApp != nil && p.server != nil {
		p.serverApp(p.now, p.server)
	}
	p.collectEvents()
	p.flush(p.client, true)
	if p.server != nil {
		p.flush(p.server, false)
	}
	next := time.Duration(math.MaxInt64)
	if len(p.flights) > 0 {
		next = p.flights[0].at
	}
	for _, c := range []*Conn{p.client, p.server} {
		if c == nil {
			continue
		}
		if t, ok := c.NextTimer(p.now); ok && t < next {
			next = t
		}
	}
	if next == math.MaxInt64 {
		return false
	}
	p.now = max(p.now, next)
	for len(p.flights) > 0 && p.flights[0].at <= p.now {
		f := p.flights[0]
		p.flights = p.flights[1:]
		p.deliver(f)
	}
	p.client.Step(p.now, p.in[0])
	if p.server != nil {
		p.server.Step(p.now, p.in[1])
	}
	p.in[0], p.in[1] = p.in[0][:0], p.in[1][:0]
	return true
}

// run steps until cond holds, failing after limit of virtual time or when
// the pair spins at one instant.
func (p *pair) run(cond func() bool, limit time.Duration) error {
	same, last := 0, time.Duration(-1)
	for !cond() {
		if p.now > limit {
			return fmt.Errorf("time limit %v passed", limit)
		}
		if !p.step() {
			if cond() {
				return nil
			}
			return errors.New("idle before the condition held")
		}
		if p.now == last {
			same++
			if same > 10000 {
				return fmt.Errorf("spinning at %v", p.now)
			}
		} else {
			same, last = 0, p.now
		}
	}
	return nil
}

func (p *pair) mustRun(cond func() bool, limit time.Duration) {
	p.t.Helper()
	if err := p.run(cond, limit); err != nil {
		p.t.Fatalf("at %v: %v (client err %v, server err %v)", p.now, err, p.client.Err(), serverErr(p.server))
	}
}

func serverErr(c *Conn) error {
	if c == nil {
		return nil
	}
	return c.Err()
}

func (p *pair) confirmed() bool {
	return p.server != nil && p.client.HandshakeConfirmed() && p.server.HandshakeConfirmed()
}

// readAll reads everything readable on a stream at now into dst and
// reports EOF.
func readAll(t testing.TB, now time.Duration, c *Conn, id uint64, dst *[]byte) bool {
	var buf [4096]byte
	for {
		n, err := c.StreamRead(now, id, buf[:])
		*dst = append(*dst, buf[:n]...)
		if err == io.EOF {
			return true
		}
		if err != nil {
			t.Fatalf("StreamRead(%d): %v", id, err)
		}
		if n == 0 {
			return false
		}
	}
}

func hasEvent(evs []Event, kind EventKind) bool {
	for _, ev := range evs {
		if ev.Kind == kind {
			return true
		}
	}
	return false
}
