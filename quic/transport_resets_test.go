package quic

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/wire"
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

// localResetTokens returns the reset tokens of c's connection IDs, in the
// order c issued them.
func localResetTokens(c *Conn) []wire.StatelessResetToken {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []wire.StatelessResetToken
	for _, id := range c.core.LocalConnIDs() {
		if tok, ok := c.core.ResetToken(id); ok {
			out = append(out, tok)
		}
	}
	return out
}

// checkIndexed fails unless tr's index maps exactly the tokens in want
// to their connection.
func checkIndexed(t *testing.T, side string, tr *Transport, want map[wire.StatelessResetToken]*Conn) {
	t.Helper()
	tr.mu.RLock()
	defer tr.mu.RUnlock()
	if len(tr.resets) != len(want) {
		t.Errorf("%s: %d tokens indexed, want %d", side, len(tr.resets), len(want))
	}
	for tok, c := range want {
		if o := tr.resets[tok]; o.first != c || len(o.more) != 0 {
			t.Errorf("%s: token %x indexed for %p and %d more, want %p", side, tok, o.first, len(o.more), c)
		}
	}
}

// TestResetIndexFollowsConnections: each Transport indexes the reset
// tokens its connections' peers gave, the server's stateless_reset_token
// and those of NEW_CONNECTION_ID frames, as many per connection as its
// active_connection_id_limit; they are gone once the connections ended.
func TestResetIndexFollowsConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		clients, servers := dialMany(t, e, 20)
		time.Sleep(time.Second)
		synctest.Wait()
		atClient := map[wire.StatelessResetToken]*Conn{}
		atServer := map[wire.StatelessResetToken]*Conn{}
		for i, c := range clients {
			s := servers[i]
			for _, tok := range localResetTokens(s) {
				atClient[tok] = c
			}
			// The client's first connection ID (the first listed,
			// in the order issued) has no token at the server: a
			// client sends no stateless_reset_token (RFC 9000
			// section 18.2).
			for _, tok := range localResetTokens(c)[1:] {
				atServer[tok] = s
			}
		}
		limit := core.DefaultActiveConnIDLimit
		if len(atClient) != len(clients)*limit || len(atServer) != len(clients)*(limit-1) {
			t.Fatalf("the servers gave %d tokens, the clients %d", len(atClient), len(atServer))
		}
		checkIndexed(t, "client", e.client, atClient)
		checkIndexed(t, "server", e.server, atServer)

		for _, c := range clients {
			_ = c.CloseWithError(0, "")
		}
		// Both ends close or drain for three probe timeouts, then end.
		time.Sleep(5 * time.Second)
		synctest.Wait()
		checkIndexed(t, "client after close", e.client, nil)
		checkIndexed(t, "server after close", e.server, nil)
	})
}

// TestResetOwners: a token two connections hold reaches both, only from
// each one's peer address, and leaves the index with the last of them.
func TestResetOwners(t *testing.T) {
	a := netip.MustParseAddrPort("192.0.2.1:443")
	b := netip.MustParseAddrPort("192.0.2.2:443")
	tr := &Transport{peerConns: map[netip.AddrPort]int{}, resets: map[wire.StatelessResetToken]resetOwners{}}
	c1, c2, c3 := &Conn{remote: a}, &Conn{remote: a}, &Conn{remote: b}
	tok := wire.StatelessResetToken{1, 2, 3}
	other := wire.StatelessResetToken{4}
	for _, c := range []*Conn{c1, c2, c3} {
		tr.addPeerLocked(c)
		tr.addResetLocked(tok, c)
		tr.addResetLocked(tok, c) // twice: still once
	}
	tr.addResetLocked(other, c1)
	data := append(make([]byte, 30), tok[:]...)
	data[0] = 0x40
	got, peer := tr.resetTarget(data, a, nil)
	if !peer || len(got) != 2 || got[0] != c1 || got[1] != c2 {
		t.Fatalf("from %v: %v (peer %v), want c1 and c2", a, got, peer)
	}
	if got, peer := tr.resetTarget(data, b, nil); !peer || len(got) != 1 || got[0] != c3 {
		t.Fatalf("from %v: %v (peer %v), want c3", b, got, peer)
	}
	// Another address: a peer of nothing, and no connection.
	if got, peer := tr.resetTarget(data, netip.MustParseAddrPort("192.0.2.3:443"), nil); peer || len(got) != 0 {
		t.Fatalf("from a stranger: %v (peer %v)", got, peer)
	}
	tr.dropResetLocked(tok, c1)
	if got, _ := tr.resetTarget(data, a, nil); len(got) != 1 || got[0] != c2 {
		t.Fatalf("after c1 left: %v, want c2", got)
	}
	tr.dropResetLocked(tok, c3)
	tr.dropResetLocked(tok, c3) // twice: nothing more
	tr.dropResetLocked(tok, c2)
	tr.dropResetLocked(other, c1)
	if len(tr.resets) != 0 {
		t.Fatalf("%d tokens left", len(tr.resets))
	}
}

// TestStatelessResetAfterMigration: a client that migrated to a new
// socket and then lost its state resets the server's connection from its
// new address, with the token of a connection ID its NEW_CONNECTION_ID
// frame gave (the one the server moved to on the new path, RFC 9000
// section 9.5); the server's index finds it there.
func TestStatelessResetAfterMigration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		key := &StatelessResetKey{4, 5, 6}
		e.client.StatelessResetKey = key
		clients, servers := dialMany(t, e, 3)
		c, s := clients[1], servers[1]
		time.Sleep(100 * time.Millisecond)
		moved := netip.AddrPortFrom(memClientAddr.Addr(), 5555)
		pc, err := e.n.Listen(moved)
		if err != nil {
			t.Fatal(err)
		}
		cr := &crashable{PacketConn: pc}
		ctx := context.Background()
		if err := c.Migrate(ctx, cr); err != nil {
			t.Fatal(err)
		}
		st, err := c.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		_, _ = st.Write([]byte("from the new address"))
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if got := s.RemoteAddr().String(); got != moved.String() {
			t.Fatalf("the server sends to %v, not %v", got, moved)
		}
		// The client loses its state without a word, and its new socket
		// gets a Transport with the same key.
		cr.dead.Store(true)
		_ = e.client.Close()
		listenAgain(t, &Transport{Conn: pc, StatelessResetKey: key})
		start := time.Now()
		ss, err := s.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		_, _ = ss.Write([]byte("still there?"))
		expectReset(t, s, start)
		var sre *StatelessResetError
		// The server's other connections to the client's first address,
		// which the client's Transport closed, were not reset.
		for _, o := range []*Conn{servers[0], servers[2]} {
			if err := context.Cause(o.Context()); errors.As(err, &sre) {
				t.Errorf("another connection was reset: %v", err)
			}
		}
	})
}

// TestStatelessResetAtPreferredAddress: a client that moved to its
// server's preferred address takes a reset from there, ending with the
// token of preferred_address's connection ID, once the server lost its
// state (RFC 9000 sections 9.6 and 10.3.1): the restarted server answers
// from the socket the client's packet came to.
func TestStatelessResetAtPreferredAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		_ = e.server.Close()
		key := &StatelessResetKey{7, 8, 9}
		spc := e.server.Conn
		ppc, err := e.n.Listen(netip.AddrPortFrom(memServerAddr.Addr(), 8443))
		if err != nil {
			t.Fatal(err)
		}
		mainCr, prefCr := &crashable{PacketConn: spc}, &crashable{PacketConn: ppc}
		first := &Transport{Conn: mainCr, PreferredConn: prefCr, StatelessResetKey: key}
		c := listenAndDial(t, e, first, spc.LocalAddr())
		time.Sleep(time.Second)
		synctest.Wait()
		if got := c.RemoteAddr().String(); got != ppc.LocalAddr().String() {
			t.Fatalf("the client sends to %v, not the preferred address %v", got, ppc.LocalAddr())
		}
		// The server crashes, and comes back on both sockets with the
		// same key.
		mainCr.dead.Store(true)
		prefCr.dead.Store(true)
		_ = first.Close()
		listenAgain(t, &Transport{Conn: spc, PreferredConn: ppc, StatelessResetKey: key})
		start := time.Now()
		st, err := c.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		_, _ = st.Write([]byte("anyone there?"))
		expectReset(t, c, start)
	})
}
