package core

import (
	"bytes"
	"net/netip"
	"testing"
	"time"
)

// TestServerProvesProbedPath: a server answers a client's probe from a new
// address with its PATH_RESPONSE and a PATH_CHALLENGE in the same
// datagram; the client's answer proves the address, so that the server
// moves there without a validation of its own (one challenge in all, none
// after the move), restarting congestion control for the new IP address.
func TestServerProvesProbedPath(t *testing.T) {
	p := migrationPair(t)
	moved := netip.MustParseAddrPort("10.0.0.7:6000")
	d := startPairDownload(t, p, 1<<20)
	p.mustRun(func() bool { d.read(t, p); return len(d.got) >= 256<<10 }, p.now+10*time.Second)
	if err := p.client.ProbePath(p.now); err != nil {
		t.Fatal(err)
	}
	var firstToMoved []byte
	afterMove, validatingAfterMove := false, false
	p.onSent = func(toServer bool, dg Datagram) {
		if toServer || dg.Addr != moved {
			return
		}
		if firstToMoved == nil {
			firstToMoved = bytes.Clone(dg.Data)
		}
		if !afterMove && p.server.RemoteAddr() == moved {
			afterMove, validatingAfterMove = true, p.server.path.validating
		}
	}
	p.clientApp = func(now time.Duration, c *Conn) {
		for {
			dg, ok := c.NextProbeDatagram(now, nil)
			if !ok {
				return
			}
			p.enqueue(flight{at: now + p.delay, toServer: true, data: dg.Data, addr: moved})
		}
	}
	p.nat = func(time.Duration) netip.AddrPort {
		if p.client.Stats().Path.Migrations > 0 {
			return moved
		}
		return clientAddr
	}
	p.clientAlso = moved
	p.mustRun(func() bool { return d.read(t, p) }, p.now+30*time.Second)
	if !bytes.Equal(d.got, d.response) {
		t.Fatalf("the client read %d bytes, not the %d-byte response", len(d.got), len(d.response))
	}
	if len(firstToMoved) < pathDatagramSize {
		t.Fatalf("the server's first datagram to the new address: %d bytes", len(firstToMoved))
	}
	if !afterMove || validatingAfterMove {
		t.Errorf("the server validated the new address after it moved (moved %v): it should have been proven ahead", afterMove)
	}
	if p.server.path.ahead.proven != moved {
		t.Errorf("the server proved %v ahead, not %v", p.server.path.ahead.proven, moved)
	}
	ss := p.server.Stats().Path
	if p.server.RemoteAddr() != moved || ss.ChallengesSent != 1 || ss.Validations != 1 || ss.ValidationsSucceeded != 1 ||
		ss.ValidationsFailed != 0 || ss.CongestionResets != 1 || ss.PeerAddressChanges != 1 {
		t.Errorf("server at %v, path stats %+v: want one challenge, sent ahead, and one reset", p.server.RemoteAddr(), ss)
	}
	if cs := p.client.Stats().Path; cs.ResponsesSent != 1 || cs.Migrations != 1 {
		t.Errorf("client path stats %+v: want one response, one migration", cs)
	}
}
