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
// is confirmed; configure, if given, changes the configurations first.
func migrationPair(t *testing.T, configure ...func(ccfg, scfg *Config)) *pair {
	t.Helper()
	ccfg, scfg := testConfigs(t, 31)
	for _, f := range configure {
		f(ccfg, scfg)
	}
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

// A copy of the client's packet sent from an attacker's address, arriving
// before the original, moves the server's path there for a while only: the
// server sends the attacker no more than three times what it received from
// it (RFC 9000 section 9.3.1), and the client's next packet from its own
// address, the newest, takes the path back to that validated address
// without a new validation (section 9.3.3). The original, now a duplicate,
// moves nothing.
func TestSpoofedAddressDoesNotMovePath(t *testing.T) {
	p := migrationPair(t)
	attacker := netip.MustParseAddrPort("192.0.2.66:9999")
	p.nat = func(time.Duration) netip.AddrPort { return clientAddr }
	d := startPairDownload(t, p, 2<<20)
	p.mustRun(func() bool { d.read(t, p); return len(d.got) >= 512<<10 }, p.now+10*time.Second)
	spoofed, toAttacker := 0, 0
	p.drop = func(toServer bool, _ int, data []byte) bool {
		if toServer && spoofed == 0 && len(data) > 0 {
			// The attacker's copy wins the race by a millisecond.
			spoofed = len(data)
			p.enqueue(flight{at: p.now + p.delay - time.Millisecond, toServer: true, data: bytes.Clone(data), addr: attacker})
		}
		return false
	}
	p.onSent = func(toServer bool, dg Datagram) {
		if !toServer && dg.Addr == attacker {
			toAttacker += len(dg.Data)
		}
	}
	p.mustRun(func() bool { return d.read(t, p) }, p.now+30*time.Second)
	if !bytes.Equal(d.got, d.response) {
		t.Fatalf("the client read %d bytes, not the %d-byte response", len(d.got), len(d.response))
	}
	if p.server.RemoteAddr() != clientAddr {
		t.Errorf("the server sends to %v, not the client's %v", p.server.RemoteAddr(), clientAddr)
	}
	st := p.server.Stats().Path
	if st.PeerAddressChanges != 2 || st.Validations != 1 || st.ValidationsSucceeded != 0 || st.CongestionResets != 0 {
		t.Errorf("server path stats %+v: want a move to the attacker and back, one validation, no success, no reset", st)
	}
	if toAttacker == 0 || toAttacker > 3*spoofed {
		t.Errorf("the server sent the attacker %d bytes after receiving %d", toAttacker, spoofed)
	}
	t.Logf("attacker sent %d bytes, got %d", spoofed, toAttacker)
}

// A validation that gets no answer ends at its deadline and the path goes
// back to the last validated address (RFC 9000 section 9.3.2), where the
// connection goes on. Meanwhile the unvalidated address gets at most three
// times what came from it.
func TestFailedValidationReverts(t *testing.T) {
	var qlog bytes.Buffer
	p := migrationPair(t, func(_, scfg *Config) { scfg.Qlog = &qlog })
	attacker := netip.MustParseAddrPort("192.0.2.66:9999")
	p.nat = func(time.Duration) netip.AddrPort { return clientAddr }
	id, err := p.client.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.StreamWrite(id, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	spoofed, toAttacker := 0, 0
	blocked := true
	p.drop = func(toServer bool, _ int, data []byte) bool {
		if !toServer {
			return false
		}
		if spoofed == 0 {
			spoofed = len(data)
			p.enqueue(flight{at: p.now + p.delay - time.Millisecond, toServer: true, data: bytes.Clone(data), addr: attacker})
			return false
		}
		return blocked // the client is cut off until the validation failed
	}
	p.onSent = func(toServer bool, dg Datagram) {
		if !toServer && dg.Addr == attacker {
			toAttacker += len(dg.Data)
		}
	}
	p.mustRun(func() bool { return p.server != nil && p.server.Stats().Path.ValidationsFailed == 1 }, p.now+10*time.Second)
	if p.server.RemoteAddr() != clientAddr {
		t.Errorf("after the failed validation the server sends to %v, not %v", p.server.RemoteAddr(), clientAddr)
	}
	if toAttacker == 0 || toAttacker > 3*spoofed {
		t.Errorf("the server sent the attacker %d bytes after receiving %d", toAttacker, spoofed)
	}
	st := p.server.Stats().Path
	if st.Reverts != 1 || st.PeerAddressChanges != 1 {
		t.Errorf("server path stats %+v: want one move and one revert", st)
	}
	blocked = false
	var got []byte
	p.mustRun(func() bool {
		readAll(t, p.now, p.server, id, &got)
		return len(got) == 4
	}, p.now+10*time.Second)
	p.mustRun(func() bool { return p.client.Stats().BytesInFlight == 0 }, p.now+10*time.Second)
	t.Logf("attacker sent %d bytes, got %d; stats %+v", spoofed, toAttacker, st)
	for _, state := range []string{"migration_started", "migration_abandoned"} {
		if !bytes.Contains(qlog.Bytes(), []byte(`"name":"connectivity:migration_state_updated","data":{"state":"`+state+`"`)) {
			t.Errorf("the server's qlog has no migration_state_updated event %s", state)
		}
	}
}

// A new IP address is a new path (RFC 9000 section 9.4): once the server
// validated it, its congestion window and RTT estimate start again from
// their initial values, and the download completes.
func TestAddressChangeResetsCongestion(t *testing.T) {
	p := migrationPair(t)
	moved := netip.MustParseAddrPort("10.0.0.9:4433")
	var moveAt time.Duration
	p.nat = func(now time.Duration) netip.AddrPort {
		if moveAt > 0 && now >= moveAt {
			return moved
		}
		return clientAddr
	}
	d := startPairDownload(t, p, 2<<20)
	p.mustRun(func() bool { d.read(t, p); return len(d.got) >= 1<<20 }, p.now+10*time.Second)
	moveAt = p.now
	var cwndAfter int
	p.mustRun(func() bool {
		d.read(t, p)
		if p.server.Stats().Path.ValidationsSucceeded == 1 && cwndAfter == 0 {
			cwndAfter = p.server.Stats().CongestionWindow
		}
		return cwndAfter > 0
	}, p.now+10*time.Second)
	initial := p.server.cfg.Recovery.WithDefaults()
	if want := min(initial.InitialWindowPackets*p.server.maxDatagram, initial.MaxWindow); cwndAfter > want {
		t.Errorf("the window after the validation is %d, not an initial window of at most %d", cwndAfter, want)
	}
	p.mustRun(func() bool { return d.read(t, p) }, p.now+30*time.Second)
	if !bytes.Equal(d.got, d.response) {
		t.Fatalf("the client read %d bytes, not the %d-byte response", len(d.got), len(d.response))
	}
	if st := p.server.Stats().Path; st.CongestionResets != 1 || st.PortChanges != 0 || p.server.RemoteAddr() != moved {
		t.Errorf("server path stats %+v, remote %v: want one reset, the new address", st, p.server.RemoteAddr())
	}
}

// A client migrates to a new local address: it probes the path with a
// connection ID the server gave and has not seen used, moves once the
// PATH_RESPONSE comes back and retires the old connection ID (RFC 9000
// sections 9.2 and 9.5). The server follows its first non-probing packet
// from there, validates the address in turn, answers with a new connection
// ID of the client's, and the download goes on intact.
func TestClientMigration(t *testing.T) {
	p := migrationPair(t)
	moved := netip.MustParseAddrPort("10.0.0.7:6000")
	d := startPairDownload(t, p, 2<<20)
	p.mustRun(func() bool { d.read(t, p); return len(d.got) >= 512<<10 }, p.now+10*time.Second)
	oldDCID := p.client.cids.dcid()
	serverOldDCID := p.server.cids.dcid()
	if err := p.client.ProbePath(p.now); err != nil {
		t.Fatalf("ProbePath: %v", err)
	}
	if err := p.client.ProbePath(p.now); err != ErrProbeUnderway {
		t.Errorf("a second ProbePath: %v, want ErrProbeUnderway", err)
	}
	probes := 0
	app := func(now time.Duration, c *Conn) {
		for {
			dg, ok := c.NextProbeDatagram(now, nil)
			if !ok {
				return
			}
			probes++
			if len(dg.Data) < 1200 {
				t.Errorf("a probe of %d bytes, not expanded to 1200 (RFC 9000 section 8.2.1)", len(dg.Data))
			}
			p.enqueue(flight{at: now + p.delay, toServer: true, data: dg.Data, addr: moved})
		}
	}
	p.clientApp = app
	// The client sends from its new address as soon as it moved, and
	// receives on both.
	p.nat = func(time.Duration) netip.AddrPort {
		if p.client.Stats().Path.Migrations > 0 {
			return moved
		}
		return clientAddr
	}
	p.clientAlso = moved
	p.mustRun(func() bool { d.read(t, p); return hasEvent(p.clientEvents, EventPathMigrated) }, p.now+5*time.Second)
	p.mustRun(func() bool { return d.read(t, p) }, p.now+30*time.Second)
	if !bytes.Equal(d.got, d.response) {
		t.Fatalf("the client read %d bytes, not the %d-byte response", len(d.got), len(d.response))
	}
	if probes != 1 {
		t.Errorf("%d probes, want 1", probes)
	}
	if p.server.RemoteAddr() != moved {
		t.Errorf("the server sends to %v, not %v", p.server.RemoteAddr(), moved)
	}
	if p.client.cids.dcid() == oldDCID {
		t.Error("the client still uses the connection ID of the old path")
	}
	if p.server.cids.dcid() == serverOldDCID {
		t.Error("the server still uses the connection ID of the old path")
	}
	if p.server.cids.isLocalID(oldDCID) {
		t.Error("the server did not learn that the old connection ID was retired")
	}
	cs, ss := p.client.Stats().Path, p.server.Stats().Path
	if cs.Migrations != 1 || cs.CongestionResets != 1 || cs.ResponsesSent != 1 {
		t.Errorf("client path stats %+v", cs)
	}
	if ss.PeerAddressChanges != 1 || ss.ValidationsSucceeded != 1 || ss.CongestionResets != 1 || ss.ResponsesSent != 1 {
		t.Errorf("server path stats %+v", ss)
	}
}

// A client refuses to probe when the server disabled active migration, or
// gave no spare connection ID, or before its handshake is confirmed; a
// server never probes.
func TestProbePathRefused(t *testing.T) {
	ccfg, scfg := testConfigs(t, 41)
	scfg.DisableActiveMigration = true
	p := newPair(t, ccfg, scfg, 20*time.Millisecond)
	if err := p.client.ProbePath(0); err != ErrHandshakeIncomplete {
		t.Errorf("ProbePath before the handshake: %v", err)
	}
	p.mustRun(p.confirmed, 2*time.Second)
	if err := p.client.ProbePath(p.now); err != ErrMigrationDisabled {
		t.Errorf("ProbePath with disable_active_migration: %v", err)
	}
	if err := p.server.ProbePath(p.now); err != ErrNotClient {
		t.Errorf("server ProbePath: %v", err)
	}
	ccfg, scfg = testConfigs(t, 42)
	p = newPair(t, ccfg, scfg, 20*time.Millisecond)
	p.mustRun(p.confirmed, 2*time.Second)
	p.client.cids.peer = p.client.cids.peer[:1] // as if the server gave none
	if err := p.client.ProbePath(p.now); err != ErrNoSpareConnID {
		t.Errorf("ProbePath without a spare connection ID: %v", err)
	}
}

// A server's preferred address (RFC 9000 section 9.6): the client probes
// it once its handshake is confirmed, with the connection ID of
// preferred_address, and moves there when the server answers; the
// server, whose client did not move, stays where it was, and the download
// goes on intact to the new address.
func TestPreferredAddress(t *testing.T) {
	preferred := netip.MustParseAddrPort("10.0.0.3:8443")
	p := migrationPair(t, func(_, scfg *Config) {
		scfg.PreferredIPv4 = preferred
		scfg.PreferredIPv6 = netip.MustParseAddrPort("[2001:db8::3]:8443")
	})
	var toPreferred int
	p.onSent = func(toServer bool, d Datagram) {
		if toServer && d.Addr == preferred {
			toPreferred++
		}
	}
	d := startPairDownload(t, p, 1<<20)
	p.mustRun(func() bool { return d.read(t, p) }, p.now+30*time.Second)
	if !bytes.Equal(d.got, d.response) {
		t.Fatalf("the client read %d bytes, not the %d-byte response", len(d.got), len(d.response))
	}
	if p.client.RemoteAddr() != preferred {
		t.Errorf("the client sends to %v, not the preferred %v", p.client.RemoteAddr(), preferred)
	}
	pa := p.client.peerParams.PreferredAddress
	if pa == nil || p.client.cids.dcid() != pa.ConnectionID {
		t.Errorf("the client's connection ID is %v, not preferred_address's", p.client.cids.dcid())
	}
	if p.server.RemoteAddr() != clientAddr {
		t.Errorf("the server moved to %v", p.server.RemoteAddr())
	}
	if toPreferred < 10 {
		t.Errorf("%d datagrams to the preferred address", toPreferred)
	}
	cs := p.client.Stats().Path
	if cs.PeerAddressChanges != 1 || cs.ChallengesSent != 1 || cs.CongestionResets != 1 {
		t.Errorf("client path stats %+v", cs)
	}
	if ss := p.server.Stats().Path; ss.PeerAddressChanges != 0 || ss.ResponsesSent != 1 {
		t.Errorf("server path stats %+v", ss)
	}
	if !hasEvent(p.serverEvents, EventPreferredAddressUsed) {
		t.Error("the server was not told that the client moved to its preferred address")
	}
}

// FuzzPeerAddress gives an established server authenticated 1-RTT packets
// of arbitrary frames from an arbitrary address, and the client arbitrary
// frames too: moving paths, validations and probes must never panic, and
// the pair must go on or close cleanly.
func FuzzPeerAddress(f *testing.F) {
	f.Add([]byte{0x01}, uint16(5000), false)
	f.Add([]byte{0x1a, 1, 2, 3, 4, 5, 6, 7, 8}, uint16(4433), true)
	f.Add([]byte{0x1b, 1, 2, 3, 4, 5, 6, 7, 8, 0x01}, uint16(6000), false)
	f.Add([]byte{0x1a, 1, 2, 3, 4, 5, 6, 7, 8, 0x00, 0x00}, uint16(7000), true)
	f.Fuzz(func(t *testing.T, payload []byte, port uint16, probe bool) {
		p := confirmedPair(t, 9)
		from := netip.AddrPortFrom(clientAddr.Addr(), port)
		if probe {
			_ = p.client.ProbePath(p.now)
			if d, ok := p.client.NextProbeDatagram(p.now, nil); ok {
				p.server.HandleDatagram(p.now, Datagram{Addr: from, Data: d.Data})
			}
		}
		p.server.HandleDatagram(p.now, Datagram{Addr: from, Data: seal1RTT(t, p.now, p.client, payload, 0)})
		p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, payload, 0)})
		for range 50 {
			if !p.step() {
				break
			}
		}
	})
}

// A client whose stream stays open and idle pings once a probe timeout
// after the last data, not at every probe timeout: the server's ACK of the
// PING brings no stream data.
func TestSilencePingOnce(t *testing.T) {
	p := migrationPair(t)
	id, err := p.client.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.StreamWrite(id, []byte("GET")); err != nil {
		t.Fatal(err)
	}
	answered := false
	p.serverApp = func(now time.Duration, c *Conn) {
		if answered {
			return
		}
		if _, err := c.StreamWrite(id, []byte("partial")); err == nil {
			answered = true // and the stream stays open
		}
	}
	var got []byte
	p.mustRun(func() bool { readAll(t, p.now, p.client, id, &got); return len(got) == 7 }, p.now+2*time.Second)
	end := p.now + 5*time.Second
	p.mustRun(func() bool { return p.now >= end }, end+time.Second)
	if n := p.client.Stats().Path.SilencePings; n != 1 {
		t.Errorf("%d silence PINGs in 5 s of an idle open stream, want 1", n)
	}
}
