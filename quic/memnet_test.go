package quic

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/memnet"
)

// The tests in memnet_*_test.go run the API over netsim/memnet inside a
// testing/synctest bubble: virtual time, exact timings, and a bubble that
// fails the test if any goroutine is left blocked at its end.

var (
	memClientAddr = netip.MustParseAddrPort("10.0.0.1:4433")
	memServerAddr = netip.MustParseAddrPort("10.0.0.2:443")
)

// memEnv is a client Transport and a listening server Transport joined by
// a memnet path.
type memEnv struct {
	t      *testing.T
	n      *memnet.Network
	server *Transport
	l      *Listener
	client *Transport
}

// newMemEnv builds the environment inside a bubble; the test's cleanup
// closes it.
func newMemEnv(t *testing.T, link netsim.LinkConfig, sconf *Config) *memEnv {
	t.Helper()
	n := memnet.New(memnet.Config{Seed: 1})
	if _, err := n.AddPath(memClientAddr.Addr(), memServerAddr.Addr(), link, link); err != nil {
		t.Fatal(err)
	}
	spc, err := n.Listen(memServerAddr)
	if err != nil {
		t.Fatal(err)
	}
	cpc, err := n.Listen(memClientAddr)
	if err != nil {
		t.Fatal(err)
	}
	e := &memEnv{t: t, n: n, server: &Transport{Conn: spc}, client: &Transport{Conn: cpc}}
	if e.l, err = e.server.Listen(serverTLS(), sconf); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.client.Close(); err != nil {
			t.Errorf("client Transport.Close: %v", err)
		}
		if err := e.server.Close(); err != nil {
			t.Errorf("server Transport.Close: %v", err)
		}
		_ = n.Close()
	})
	return e
}

// connect dials the server and returns both ends of the connection.
func (e *memEnv) connect(cconf *Config) (client, server *Conn) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type result struct {
		c   *Conn
		err error
	}
	accepted := make(chan result, 1)
	go func() {
		c, err := e.l.Accept(ctx)
		accepted <- result{c, err}
	}()
	c, err := e.client.Dial(ctx, net.UDPAddrFromAddrPort(memServerAddr), clientTLS(), cconf)
	if err != nil {
		e.t.Fatalf("Dial: %v", err)
	}
	r := <-accepted
	if r.err != nil {
		e.t.Fatalf("Accept: %v", r.err)
	}
	return c, r.c
}

// link10ms is a 100 Mbit/s link with 10 ms of delay each way.
var link10ms = netsim.LinkConfig{RateBps: 100e6, Delay: 10 * time.Millisecond}
