package core

import (
	"slices"
	"testing"

	"github.com/satquic/satquic/quic/internal/wire"
)

// localTokens returns the reset tokens c gave with its connection IDs.
func localTokens(c *Conn) []wire.StatelessResetToken {
	var out []wire.StatelessResetToken
	for _, l := range c.cids.local {
		out = append(out, l.token)
	}
	return out
}

// sameTokens reports whether a and b hold the same tokens in any order.
func sameTokens(a, b []wire.StatelessResetToken) bool {
	cmp := func(x, y wire.StatelessResetToken) int { return slices.Compare(x[:], y[:]) }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	return slices.Equal(a, b)
}

// TestPeerResetTokens: each end lists the reset tokens of the peer's
// connection IDs it holds, the server's stateless_reset_token among the
// client's, and no longer lists those of retired connection IDs (RFC 9000
// section 10.3.1).
func TestPeerResetTokens(t *testing.T) {
	p := confirmedPair(t, 83)
	c, s := p.client, p.server
	if got, want := c.PeerResetTokens(nil), localTokens(s); len(got) != DefaultActiveConnIDLimit || !sameTokens(got, want) {
		t.Fatalf("client lists %x, the server gave %x", got, want)
	}
	// The client's first connection ID comes without a token: a client
	// sends no stateless_reset_token (RFC 9000 section 18.2).
	if got := s.PeerResetTokens(nil); len(got) != DefaultActiveConnIDLimit-1 || !sameTokens(got, localTokens(c)[1:]) {
		t.Fatalf("server lists %x, the client gave %x", got, localTokens(c))
	}
	// The server retires all but a new connection ID.
	if err := s.cids.newLocal(&s.events); err != nil {
		t.Fatal(err)
	}
	l := s.cids.local[len(s.cids.local)-1]
	f := &wire.NewConnectionIDFrame{SequenceNumber: l.seq, RetirePriorTo: l.seq, ConnectionID: l.id, StatelessResetToken: l.token}
	c.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, s, frameBytes(t, f), 0)})
	if got := c.PeerResetTokens(nil); len(got) != 1 || got[0] != l.token {
		t.Fatalf("after Retire Prior To the client lists %x, want only %x", got, l.token)
	}
	// A reused buffer takes them without allocating.
	buf := c.PeerResetTokens(nil)
	if n := testing.AllocsPerRun(10, func() { buf = c.PeerResetTokens(buf[:0]) }); n != 0 {
		t.Errorf("%v allocations with a reused buffer", n)
	}
	// Appending keeps what dst held.
	if got := c.PeerResetTokens([]wire.StatelessResetToken{{9}}); len(got) != 2 || got[0] != (wire.StatelessResetToken{9}) {
		t.Fatalf("appended to %x", got)
	}
}
