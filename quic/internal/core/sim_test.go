package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/coresim"
)

// simEndpoint is a Conn over netsim for the tests: coresim's endpoint,
// the one driver over the simulator, with what the tests look at.
type simEndpoint struct {
	*coresim.Endpoint[*Conn, Event]
	// conn is the connection; a server's is nil until the client's
	// first Initial, from which it is created as a listener would.
	conn *Conn
	// app, if set, is the application's turn at every poll.
	app func(now time.Duration, c *Conn)
	// events collects every event of the run.
	events []Event
	// completedAt is when the handshake completed here.
	completedAt time.Duration
	// sentAt is when each datagram was sent.
	sentAt []time.Duration
	// tick, if set, gives the application a turn at least this often,
	// for applications that send on a clock of their own.
	tick time.Duration
}

// Poll runs the connection's turn, and asks for the next one within tick.
func (e *simEndpoint) Poll(now time.Duration) ([]netsim.Datagram, time.Duration, bool) {
	out, next, ok := e.Endpoint.Poll(now)
	if _, live := e.Conn(); live && e.tick > 0 && (!ok || next > now+e.tick) {
		next, ok = now+e.tick, true
	}
	return out, next, ok
}

func newSimEndpoint(ep *coresim.Endpoint[*Conn, Event]) *simEndpoint {
	e := &simEndpoint{Endpoint: ep}
	ep.App = e.turn
	ep.OnSend = func(now time.Duration, _ Datagram) { e.sentAt = append(e.sentAt, now) }
	return e
}

// turn records the events of a poll, then runs the application.
func (e *simEndpoint) turn(now time.Duration, events []Event) {
	for _, ev := range events {
		if ev.Kind == EventHandshakeComplete {
			e.completedAt = now
		}
	}
	e.events = append(e.events, events...)
	if e.app != nil {
		e.app(now, e.conn)
	}
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
	sp := &simPair{net: n, path: path, client: newSimEndpoint(coresim.NewClient(conn))}
	sp.client.conn = conn
	sp.server = newSimEndpoint(coresim.NewServer(func(now time.Duration, d Datagram) (*Conn, bool) {
		info, err := PeekInitial(d.Data)
		if err != nil {
			return nil, false
		}
		params := ServerParams{RemoteAddr: d.Addr, OriginalDestConnID: info.DstConnID}
		if v := scfg.AddressValidator; v != nil {
			// As a listener would: a NEW_TOKEN token validates the
			// client's address.
			if params, err = v.Check(info, d.Addr, now); err != nil {
				t.Fatalf("Check: %v", err)
			}
		}
		c, err := NewServerConn(scfg, now, params)
		if err != nil {
			t.Fatalf("NewServerConn: %v", err)
		}
		sp.server.conn = c
		return c, true
	}))
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
