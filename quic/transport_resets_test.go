package quic

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// manyConns is how many connections the tests below open from one
// client Transport to one server: more than the 128 a server takes from
// one address by default at the command line.
const manyConns = 200

// dialMany opens n connections from e's client to e's server, one after
// the other (the server takes a few handshakes from one address at a
// time), and returns them with the server's.
func dialMany(t *testing.T, e *memEnv, n int) (clients, servers []*Conn) {
	t.Helper()
	ctx := context.Background()
	for range n {
		c, err := e.client.Dial(ctx, e.server.Conn.LocalAddr(), clientTLS(), nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.l.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		clients, servers = append(clients, c), append(servers, s)
	}
	return clients, servers
}

// datagramsReceived sums what the connections' cores took in.
func datagramsReceived(conns []*Conn) uint64 {
	var n uint64
	for _, c := range conns {
		n += c.Stats().DatagramsReceived
	}
	return n
}

// strayShort is a short-header datagram for no connection: it ends with
// no reset token anyone gave.
func strayShort() []byte {
	b := make([]byte, 48)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	b[0] = 0x40 | 0x01
	return b
}

// TestStrayDatagramWakesNoConnection: a short-header datagram that routes
// to no connection and ends with none of the peer's reset tokens reaches
// none of the connections to its sender, however many (RFC 9000 section
// 10.3.1 compares it with the tokens of the connection IDs used towards
// that address); nor is it answered with a Stateless Reset of our own.
func TestStrayDatagramWakesNoConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		clients, _ := dialMany(t, e, manyConns)
		time.Sleep(time.Second)
		synctest.Wait()
		before := datagramsReceived(clients)
		if _, err := e.server.Conn.WriteTo(strayShort(), e.client.Conn.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if n := datagramsReceived(clients) - before; n != 0 {
			t.Errorf("a stray datagram reached %d of %d connections", n, len(clients))
		}
		// The rule that two endpoints cannot reset each other in turn:
		// a sender with connections gets no reset of ours.
		if !e.client.offerReset(strayShort(), memServerAddr) {
			t.Error("a stray datagram from a peer with connections would be answered with a Stateless Reset")
		}
	})
}
