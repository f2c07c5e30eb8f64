package quic

import (
	"net/netip"
	"slices"

	"github.com/satquic/satquic/quic/internal/wire"
)

// The peers' stateless reset tokens, which a Stateless Reset ends with
// (RFC 9000 section 10.3.1). It carries no connection ID of ours, so it
// routes to no connection: the Transport looks its last 16 bytes up among
// the tokens its connections hold from their peers (Transport.resets),
// and hands it only to the connection whose token it is, if that
// connection's peer sent it. Handing it instead to every connection to
// the sender would wake each of them, up to hundreds behind one address
// (a load generator, a proxy), for each stray or spoofed datagram.
//
// A connection reports the tokens its core holds after each step
// (syncResetTokens): those of the peer's connection IDs it has not
// retired, no more than the active_connection_id_limit it announced
// (core.DefaultActiveConnIDLimit, 4, which Config does not change; the
// core closes a connection whose peer exceeds it), so the index holds at
// most 4 tokens per connection. They leave it when the connection ends
// (forget).

// resetOwners is the connection a reset token belongs to, and any other
// that holds the same token: a token is drawn at random or derived from
// a connection ID and a secret, so two connections share one only if a
// peer gave the same token twice, but then each must still get its
// reset.
type resetOwners struct {
	first *Conn
	more  []*Conn
}

// has reports whether c holds the token.
func (o *resetOwners) has(c *Conn) bool {
	return o.first == c || slices.Contains(o.more, c)
}

// addResetLocked indexes c's token tok; t.mu is held.
func (t *Transport) addResetLocked(tok wire.StatelessResetToken, c *Conn) {
	o, ok := t.resets[tok]
	switch {
	case !ok:
		t.resets[tok] = resetOwners{first: c}
	case !o.has(c):
		o.more = append(o.more, c)
		t.resets[tok] = o
	}
}

// dropResetLocked removes c's token tok from the index; t.mu is held.
func (t *Transport) dropResetLocked(tok wire.StatelessResetToken, c *Conn) {
	o, ok := t.resets[tok]
	if !ok {
		return
	}
	if o.first == c {
		if len(o.more) == 0 {
			delete(t.resets, tok)
			return
		}
		o.first, o.more = o.more[0], o.more[1:]
	} else {
		o.more = slices.DeleteFunc(o.more, func(x *Conn) bool { return x == c })
	}
	if len(o.more) == 0 {
		o.more = nil
	}
	t.resets[tok] = o
}

// dropAllResetsLocked removes every token of a connection that ends;
// t.mu is held.
func (t *Transport) dropAllResetsLocked(c *Conn) {
	for _, tok := range c.resetTokens {
		t.dropResetLocked(tok, c)
	}
	c.resetTokens = nil
}

// resetTarget returns the connections that hold the token data ends
// with and whose peer is from, and whether from is the peer of any
// connection at all.
func (t *Transport) resetTarget(data []byte, from netip.AddrPort, dst []*Conn) (conns []*Conn, peer bool) {
	tok := wire.StatelessResetToken(data[len(data)-wire.StatelessResetTokenLen:])
	t.mu.RLock()
	defer t.mu.RUnlock()
	peer = t.peerConns[from] > 0
	o, ok := t.resets[tok]
	if !ok || !peer {
		return dst, peer
	}
	// Only the address the connection sends to (RFC 9000 section
	// 10.3.1): the peer's current one, which a server's connection
	// follows when its client migrates, and a client's when it moves to
	// the server's preferred address (setRemote); not the one it left.
	// A client that migrated to a socket of its own reads that socket
	// itself, resets included. c.remote is guarded by t.mu too.
	if o.first.remote == from {
		dst = append(dst, o.first)
	}
	for _, c := range o.more {
		if c.remote == from {
			dst = append(dst, c)
		}
	}
	return dst, peer
}

// syncResetTokens brings the Transport's index up to the tokens c's core
// holds now, after a step that may have learned or retired some; c.mu is
// held, and c.resetTokens is the connection goroutine's, written under
// t.mu too.
func (c *Conn) syncResetTokens() {
	c.tokenScratch = c.core.PeerResetTokens(c.tokenScratch[:0])
	if slices.Equal(c.tokenScratch, c.resetTokens) {
		return
	}
	t := c.t
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tok := range c.resetTokens {
		if !slices.Contains(c.tokenScratch, tok) {
			t.dropResetLocked(tok, c)
		}
	}
	for _, tok := range c.tokenScratch {
		t.addResetLocked(tok, c)
	}
	c.resetTokens, c.tokenScratch = c.tokenScratch, c.resetTokens
}
