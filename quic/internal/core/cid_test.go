package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// TestConnIDsIssued: after the handshake each end announces connection
// IDs up to the peer's active_connection_id_limit, and the driver hears of
// each.
func TestConnIDsIssued(t *testing.T) {
	p := confirmedPair(t, 80)
	p.collectEvents()
	for _, c := range []*Conn{p.client, p.server} {
		if n := len(c.LocalConnIDs()); n != DefaultActiveConnIDLimit {
			t.Errorf("client=%v: %d local connection IDs, want %d", c.isClient, n, DefaultActiveConnIDLimit)
		}
		if n := len(c.cids.peer); n != DefaultActiveConnIDLimit {
			t.Errorf("client=%v: %d peer connection IDs, want %d", c.isClient, n, DefaultActiveConnIDLimit)
		}
	}
	n := 0
	for _, ev := range p.serverEvents {
		if ev.Kind == EventConnIDIssued {
			n++
		}
	}
	if n != DefaultActiveConnIDLimit {
		t.Errorf("%d EventConnIDIssued at the server", n)
	}
}

// TestRetirePriorTo: a peer's Retire Prior To retires the connection IDs
// below it, moves to the lowest left and sends RETIRE_CONNECTION_ID; the
// issuer replaces retired IDs (RFC 9000 sections 5.1.2 and 19.15).
func TestRetirePriorTo(t *testing.T) {
	p := confirmedPair(t, 81)
	c, s := p.client, p.server
	// The server announces a new connection ID and asks the client to
	// retire everything before it.
	if err := s.cids.newLocal(&s.events); err != nil {
		t.Fatal(err)
	}
	l := s.cids.local[len(s.cids.local)-1]
	f := &wire.NewConnectionIDFrame{SequenceNumber: l.seq, RetirePriorTo: l.seq, ConnectionID: l.id, StatelessResetToken: l.token}
	c.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, s, frameBytes(t, f), 0)})
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	if c.cids.dcid() != l.id || len(c.cids.peer) != 1 || len(c.cids.retire) != int(l.seq) {
		t.Fatalf("client uses %v with %d peer IDs and %d to retire", c.cids.dcid(), len(c.cids.peer), len(c.cids.retire))
	}
	// The client's packets now reach the server under the new ID; the
	// server retires the old ones and issues replacements.
	p.mustRun(func() bool {
		return len(c.cids.retire) == 0 && len(s.cids.local) == DefaultActiveConnIDLimit && len(c.cids.peer) == DefaultActiveConnIDLimit
	}, p.now+time.Second)
	for _, id := range s.LocalConnIDs() {
		if !s.cids.isLocalID(id) {
			t.Fatal("inconsistent")
		}
	}
	if s.cids.localBySeq(0) != nil {
		t.Error("server kept connection ID 0 after its retirement")
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestRetireOwnPacketID: retiring the connection ID a packet was sent to
// is a PROTOCOL_VIOLATION (RFC 9000 section 19.16).
func TestRetireOwnPacketID(t *testing.T) {
	p := confirmedPair(t, 82)
	seq := p.server.cids.local[0].seq // the client sends to it
	f := &wire.RetireConnectionIDFrame{SequenceNumber: seq}
	p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, frameBytes(t, f), 0)})
	var ce *ConnError
	if !asConnError(p.server.Err(), &ce) || ce.Code != wire.CodeProtocolViolation {
		t.Fatalf("server closed with %v", p.server.Err())
	}
}
