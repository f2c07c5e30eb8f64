package coresim

import (
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/dgram"
)

var (
	clientAddr = netip.MustParseAddrPort("10.0.0.1:4433")
	serverAddr = netip.MustParseAddrPort("10.0.0.2:443")
)

// echo is a connection that answers each datagram with a copy, sent with
// the codepoint it arrived with, and reports each as an event; a client
// echo starts with one datagram and stops after rounds answers.
type echo struct {
	peer   netip.AddrPort
	queue  []dgram.Datagram
	events []string
	steps  []time.Duration
	rounds int
}

func (c *echo) Step(now time.Duration, in []dgram.Datagram) {
	c.steps = append(c.steps, now)
	for _, d := range in {
		c.events = append(c.events, string(d.Data)+" "+d.ECN.String())
		if c.rounds > 0 {
			c.rounds--
			c.queue = append(c.queue, dgram.Datagram{Addr: c.peer, Data: append([]byte(nil), d.Data...), ECN: d.ECN})
		}
	}
}

func (c *echo) PollEvent() (string, bool) {
	if len(c.events) == 0 {
		return "", false
	}
	ev := c.events[0]
	c.events = c.events[1:]
	return ev, true
}

func (c *echo) NextDatagram(_ time.Duration, _ []byte) (dgram.Datagram, bool) {
	if len(c.queue) == 0 {
		return dgram.Datagram{}, false
	}
	d := c.queue[0]
	c.queue = c.queue[1:]
	return d, true
}

func (c *echo) NextTimer(time.Duration) (time.Duration, bool) { return 0, false }

// TestEndpoints runs a client echo against a server created from its
// first datagram, over a path that keeps codepoints: every turn gets its
// datagrams with their codepoints, and the application the events.
func TestEndpoints(t *testing.T) {
	n := netsim.NewNetwork(netsim.NetworkConfig{Seed: 1})
	link := netsim.LinkConfig{Delay: 10 * time.Millisecond}
	if _, err := n.AddPath(clientAddr.Addr(), serverAddr.Addr(), link, link); err != nil {
		t.Fatal(err)
	}
	cc := &echo{peer: serverAddr, rounds: 2, queue: []dgram.Datagram{{Addr: serverAddr, Data: []byte("hello"), ECN: ecn.ECT0}}}
	client := NewClient(cc)
	var accepted *echo
	server := NewServer(func(now time.Duration, d dgram.Datagram) (*echo, bool) {
		if string(d.Data) != "hello" || now != 10*time.Millisecond {
			t.Errorf("accept of %q at %v", d.Data, now)
		}
		accepted = &echo{peer: d.Addr, rounds: 2}
		return accepted, true
	})
	var clientEvents []string
	client.App = func(now time.Duration, events []string) { clientEvents = append(clientEvents, events...) }
	sent := 0
	server.OnSend = func(time.Duration, dgram.Datagram) { sent++ }
	if err := n.Attach(serverAddr, server); err != nil {
		t.Fatal(err)
	}
	if err := n.Attach(clientAddr, client); err != nil {
		t.Fatal(err)
	}
	if err := n.Run(time.Second); err != nil {
		t.Fatal(err)
	}
	if conn, ok := server.Conn(); !ok || conn != accepted {
		t.Fatal("the server endpoint has not its accepted connection")
	}
	// hello goes out ECT(0), comes back twice from the server and once
	// more from the client.
	if want := []string{"hello ECT(0)", "hello ECT(0)"}; len(clientEvents) != 2 || clientEvents[0] != want[0] || clientEvents[1] != want[1] {
		t.Errorf("client events %q, want %q", clientEvents, want)
	}
	if sent != 2 {
		t.Errorf("server sent %d datagrams, want 2", sent)
	}
	if len(accepted.steps) == 0 || accepted.steps[0] != 10*time.Millisecond {
		t.Errorf("server turns at %v, want the first at 10ms", accepted.steps)
	}
}

// TestDropAndRefuse: Drop loses datagrams before the connection or the
// accept callback sees them, and a refused datagram creates nothing.
func TestDropAndRefuse(t *testing.T) {
	calls := 0
	server := NewServer(func(time.Duration, dgram.Datagram) (*echo, bool) {
		calls++
		return nil, false
	})
	server.Drop = func(d dgram.Datagram) bool { return d.ECN == ecn.CE }
	server.ReceiveECN(0, clientAddr, []byte("x"), ecn.CE)
	server.Receive(0, clientAddr, []byte("y"))
	if calls != 1 {
		t.Errorf("accept called %d times, want 1", calls)
	}
	if _, ok := server.Conn(); ok {
		t.Error("a refused datagram created a connection")
	}
	if out, _, ok := server.Poll(0); len(out) != 0 || ok {
		t.Error("an endpoint without a connection sends or asks for a turn")
	}
}
