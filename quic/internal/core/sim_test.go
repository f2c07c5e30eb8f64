package core

import (
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// simEndpoint runs a Conn as a netsim endpoint. The server side creates
// its Conn from the first datagram, as a listener would.
type simEndpoint struct {
	t      testing.TB
	conn   *Conn
	peer   netip.AddrPort
	scfg   *Config // server only
	app    func(now time.Duration, c *Conn)
	events []Event
	out    []netsim.Datagram
	// completedAt is when the handshake completed here.
	completedAt time.Duration
	// sentAt is when each datagram was sent.
	sentAt []time.Duration
	// drop, if set, loses the datagrams it reports true for on their
	// arrival, as a path that drops by codepoint would.
	drop func(ecn netsim.ECN) bool
}

func (e *simEndpoint) Receive(now time.Duration, from netip.AddrPort, data []byte) {
	e.ReceiveECN(now, from, data, netsim.NotECT)
}

// ReceiveECN hands the Conn the codepoint the datagram arrived with.
func (e *simEndpoint) ReceiveECN(now time.Duration, from netip.AddrPort, data []byte, ecn netsim.ECN) {
	if e.drop != nil && e.drop(ecn) {
		return
	}
	if e.conn == nil {
		info, err := PeekInitial(data)
		if err != nil {
			return
		}
		e.conn, err = NewServerConn(e.scfg, now, ServerParams{RemoteAddr: from, OriginalDestConnID: info.DstConnID})
		if err != nil {
			e.t.Fatalf("NewServerConn: %v", err)
		}
	}
	e.conn.HandleDatagram(now, Datagram{Addr: from, Data: data, ECN: ecn})
}

func (e *simEndpoint) Poll(now time.Duration) ([]netsim.Datagram, time.Duration, bool) {
	if e.conn == nil {
		return nil, 0, false
	}
	e.conn.HandleTimer(now)
	for {
		ev, ok := e.conn.PollEvent()
		if !ok {
			break
		}
		if ev.Kind == EventHandshakeComplete {
			e.completedAt = now
		}
		e.events = append(e.events, ev)
	}
	if e.app != nil {
		e.app(now, e.conn)
	}
	e.out = e.out[:0]
	for {
		d, ok := e.conn.NextDatagram(now, nil)
		if !ok {
			break
		}
		e.out = append(e.out, netsim.Datagram{To: e.peer, Data: d.Data, ECN: d.ECN})
		e.sentAt = append(e.sentAt, now)
	}
	next, ok := e.conn.NextTimer(now)
	return e.out, next, ok
}

// simPair is a client and a server over a netsim path.
type simPair struct {
	net            *netsim.Network
	path           *netsim.Path
	client, server *simEndpoint
}

func newSimPair(t testing.TB, prof netsim.Profile, seed uint64, ccfg, scfg *Config, onEvent func(netsim.Event)) *simPair {
	t.Helper()
	n := netsim.NewNetwork(netsim.NetworkConfig{Seed: seed, OnEvent: onEvent})
	path, err := n.AddProfilePath(clientAddr.Addr(), serverAddr.Addr(), prof)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	sp := &simPair{
		net:    n,
		path:   path,
		client: &simEndpoint{t: t, conn: conn, peer: serverAddr},
		server: &simEndpoint{t: t, peer: clientAddr, scfg: scfg},
	}
	if err := n.Attach(serverAddr, sp.server); err != nil {
		t.Fatal(err)
	}
	if err := n.Attach(clientAddr, sp.client); err != nil {
		t.Fatal(err)
	}
	return sp
}

func (sp *simPair) run(t testing.TB, done func() bool, limit time.Duration) {
	t.Helper()
	if err := sp.net.RunUntil(done, limit); err != nil {
		t.Fatalf("at %v: %v (client: %v, server: %v)", sp.net.Now(), err, sp.client.conn.Err(), serverErr(sp.server.conn))
	}
}

func profile(t testing.TB, name string) netsim.Profile {
	t.Helper()
	p, err := netsim.LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
