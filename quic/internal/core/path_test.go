package core

import (
	"bytes"
	"net/netip"
	"testing"
	"time"
)

// pairDownload is a response the server writes on the client's stream as
// fast as the stream takes it, and what the client read of it, with the
// time of every read that brought data.
type pairDownload struct {
	id       uint64
	response []byte
	written  int
	got      []byte
	readAt   []time.Duration
}

// startPairDownload opens a stream at the client, whose request the server
// answers with n bytes.
func startPairDownload(t *testing.T, p *pair, n int) *pairDownload {
	t.Helper()
	id, err := p.client.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.StreamWrite(id, []byte("GET")); err != nil {
		t.Fatal(err)
	}
	if err := p.client.CloseWrite(id); err != nil {
		t.Fatal(err)
	}
	d := &pairDownload{id: id, response: payload(n, 7)}
	p.serverApp = func(now time.Duration, c *Conn) {
		if d.written == len(d.response) {
			return
		}
		k, err := c.StreamWrite(d.id, d.response[d.written:])
		if err != nil {
			return // not opened yet
		}
		d.written += k
		if d.written == len(d.response) {
			if err := c.CloseWrite(d.id); err != nil {
				t.Fatal(err)
			}
		}
	}
	return d
}

// read reads what arrived at the client, noting when data came, and
// reports the end of the stream.
func (d *pairDownload) read(t *testing.T, p *pair) bool {
	before := len(d.got)
	done := readAll(t, p.now, p.client, d.id, &d.got)
	if len(d.got) > before {
		d.readAt = append(d.readAt, p.now)
	}
	return done
}

// longestGapAfter is the longest time between two reads that brought
// data, among those that end after at.
func (d *pairDownload) longestGapAfter(at time.Duration) time.Duration {
	var gap time.Duration
	for i := 1; i < len(d.readAt); i++ {
		if d.readAt[i] > at {
			gap = max(gap, d.readAt[i]-d.readAt[i-1])
		}
	}
	return gap
}

// migrationPair is a pair with a one-way delay of 20 ms whose handshake
// is confirmed.
func migrationPair(t *testing.T) *pair {
	t.Helper()
	ccfg, scfg := testConfigs(t, 31)
	p := newPair(t, ccfg, scfg, 20*time.Millisecond)
	p.mustRun(p.confirmed, 2*time.Second)
	return p
}

// A NAT rebinding of the client's port in the middle of a pairDownload: the
// server's packets to the old port are lost from then on, the client's
// come from the new one. The server follows the client's newest packet to
// the new port, validates it, keeps its congestion state (only the port
// changed, RFC 9000 section 9.4), and the pairDownload completes intact after
// a stall of two round trips plus the client's ACK delay: one round trip
// for the client's first packet from the new port to reach the server and
// the server's challenge to come back, one for the PATH_RESPONSE to
// validate the address and the data to follow. Until then the
// anti-amplification limit of the new address (three times what came
// from it, section 9.3.1) leaves room for the challenge only.
func TestNATRebindingDownload(t *testing.T) {
	p := migrationPair(t)
	rebound := netip.AddrPortFrom(clientAddr.Addr(), 50000)
	var rebindAt time.Duration
	p.nat = func(now time.Duration) netip.AddrPort {
		if rebindAt > 0 && now >= rebindAt {
			return rebound
		}
		return clientAddr
	}
	d := startPairDownload(t, p, 4<<20)
	p.mustRun(func() bool { d.read(t, p); return len(d.got) >= 1<<20 }, p.now+10*time.Second)
	rebindAt = p.now
	cwndBefore := p.server.Stats().CongestionWindow
	p.mustRun(func() bool { return d.read(t, p) }, p.now+30*time.Second)
	if !bytes.Equal(d.got, d.response) {
		t.Fatalf("the client read %d bytes, not the %d-byte response", len(d.got), len(d.response))
	}
	if p.server.RemoteAddr() != rebound {
		t.Errorf("the server sends to %v, not the rebound %v", p.server.RemoteAddr(), rebound)
	}
	st := p.server.Stats().Path
	want := PathStats{PeerAddressChanges: 1, PortChanges: 1, Validations: 1, ValidationsSucceeded: 1, ChallengesSent: 1}
	if st != want {
		t.Errorf("server path stats %+v, want %+v", st, want)
	}
	if c := p.server.Stats().CongestionWindow; c < cwndBefore/2 {
		t.Errorf("the server's window fell from %d to %d: a port change keeps the path's state", cwndBefore, c)
	}
	if p.natDropped == 0 {
		t.Error("no datagram to the old port was lost: the rebinding happened after the transfer")
	}
	gap := d.longestGapAfter(rebindAt)
	rtt := 2 * p.delay
	pto := probeTimeout(p.server.sender.RTT())
	t.Logf("stall %v (RTT %v, PTO %v), %d datagrams lost to the old port", gap, rtt, pto, p.natDropped)
	if gap > rtt+pto {
		t.Errorf("the pairDownload stalled %v, more than an RTT and a PTO (%v)", gap, rtt+pto)
	}
}

