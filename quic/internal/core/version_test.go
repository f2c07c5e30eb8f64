package core

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// firstClientDatagram returns the first datagram of a new client.
func firstClientDatagram(t *testing.T, cfg *Config) (*Conn, []byte) {
	t.Helper()
	c, err := NewClientConn(cfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := c.NextDatagram(0, nil)
	if !ok {
		t.Fatal("no first datagram")
	}
	return c, d.Data
}

func TestVersionNegotiationPacket(t *testing.T) {
	ccfg, _ := testConfigs(t, 80)
	c, d := firstClientDatagram(t, ccfg)
	unknown := append([]byte(nil), d...)
	copy(unknown[1:5], []byte{0x1a, 0x2a, 0x3a, 0x4a})
	vnp, ok := VersionNegotiation(nil, unknown, nil)
	if !ok {
		t.Fatal("no Version Negotiation for an unknown version")
	}
	vn, err := wire.ParseVersionNegotiation(vnp)
	if err != nil {
		t.Fatal(err)
	}
	if string(vn.DstConnID) != string(c.cids.local[0].id.Bytes()) || string(vn.SrcConnID) != string(c.origDCID.Bytes()) {
		t.Errorf("connection IDs %x %x not echoed swapped", vn.DstConnID, vn.SrcConnID)
	}
	if len(vn.Versions) != 3 || vn.Versions[0] != wire.Version1 || vn.Versions[1] != wire.Version2 || !vn.Versions[2].IsReserved() {
		t.Errorf("versions %v, want v1, v2 and a reserved one", vn.Versions)
	}
	// No answer: a supported version, a short datagram, a Version
	// Negotiation packet, a short header, garbage.
	for name, dg := range map[string][]byte{
		"supported": d,
		"short":     unknown[:1199],
		"vn":        append(vnp, make([]byte, 1200)...),
		"1-RTT":     append([]byte{0x40}, make([]byte, 1300)...),
		"truncated": append([]byte{0xc0, 1, 2, 3, 4, 30}, make([]byte, 1194)...)[:6],
	} {
		if out, ok := VersionNegotiation(nil, dg, nil); ok || len(out) != 0 {
			t.Errorf("%s: answered with %d bytes", name, len(out))
		}
	}
	if _, ok := VersionNegotiation(nil, d, []wire.Version{wire.Version2}); !ok {
		t.Error("a server supporting only v2 did not answer a v1 Initial")
	}
}

// vnListener answers Initials of versions not in supported with Version
// Negotiation, and accepts the others.
func vnListener(t *testing.T, supported []wire.Version) func([]byte) ([]byte, *ServerParams) {
	return func(d []byte) ([]byte, *ServerParams) {
		if vn, ok := VersionNegotiation(nil, d, supported); ok {
			return vn, nil
		}
		info, err := PeekInitial(d)
		if err != nil {
			t.Fatalf("PeekInitial: %v", err)
		}
		return nil, &ServerParams{RemoteAddr: clientAddr, OriginalDestConnID: info.DstConnID, Version: info.Version}
	}
}

// TestVersionNegotiationAbort: a server supporting none of the client's
// versions ends the attempt when its Version Negotiation packet arrives,
// one round trip after the start, with a *VersionError.
func TestVersionNegotiationAbort(t *testing.T) {
	ccfg, scfg := testConfigs(t, 81)
	ccfg.Versions = []wire.Version{wire.Version1}
	const delay = 20 * time.Millisecond
	p := newPair(t, ccfg, scfg, delay)
	p.listen = vnListener(t, []wire.Version{wire.Version2})
	p.mustRun(p.client.Closed, time.Second)
	var ve *VersionError
	if !errors.As(p.client.Err(), &ve) || !errors.Is(p.client.Err(), ErrNoCommonVersion) {
		t.Fatalf("client error %v, want a *VersionError", p.client.Err())
	}
	if ve.Offered[0] != wire.Version2 || !slices.Equal(ve.Ours, []wire.Version{wire.Version1}) {
		t.Errorf("error lists offered %v, ours %v", ve.Offered, ve.Ours)
	}
	if p.now != 2*delay {
		t.Errorf("gave up at %v, want %v", p.now, 2*delay)
	}
	p.collectEvents()
	if n := len(p.clientEvents); n == 0 || p.clientEvents[n-1].Kind != EventClosed {
		t.Error("no EventClosed")
	}
	if p.server != nil {
		t.Error("a server connection was created")
	}
}

// TestVersionNegotiationRestart: a client of v1 told that the server
// speaks only v2 starts again in v2 and completes one round trip later.
func TestVersionNegotiationRestart(t *testing.T) {
	ccfg, scfg := testConfigs(t, 82)
	scfg.Versions = []wire.Version{wire.Version2}
	const delay = 20 * time.Millisecond
	p := newPair(t, ccfg, scfg, delay)
	p.listen = vnListener(t, []wire.Version{wire.Version2})
	var completedAt time.Duration
	p.clientApp = func(now time.Duration, c *Conn) {
		if c.HandshakeComplete() && completedAt == 0 {
			completedAt = p.now
		}
	}
	p.mustRun(p.confirmed, 5*time.Second)
	if p.client.version != wire.Version2 || p.server.version != wire.Version2 {
		t.Fatalf("versions client %v server %v, want v2", p.client.version, p.server.version)
	}
	if completedAt != 4*delay {
		t.Errorf("client completed at %v, want %v", completedAt, 4*delay)
	}
	if !p.client.vn.afterVN {
		t.Error("client does not know it negotiated")
	}
}

// TestVersionNegotiationDowngrade: after a Version Negotiation packet,
// a server whose authenticated version_information lists a version the
// client prefers to the one it fell back to reveals a forged or stale
// Version Negotiation packet: the client closes with
// VERSION_NEGOTIATION_ERROR (RFC 9368 section 4).
func TestVersionNegotiationDowngrade(t *testing.T) {
	ccfg, scfg := testConfigs(t, 83)
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	// The "attacker" claims the server only speaks v2; the server's
	// connection supports v1 and v2.
	p.listen = vnListener(t, []wire.Version{wire.Version2})
	p.mustRun(func() bool { return p.client.Err() != nil }, 5*time.Second)
	var ce *ConnError
	if !errors.As(p.client.Err(), &ce) || ce.Remote || ce.Code != wire.CodeVersionNegotiationError {
		t.Fatalf("client error %v, want VERSION_NEGOTIATION_ERROR", p.client.Err())
	}
}

// TestVersionNegotiationIgnored: Version Negotiation packets that list the
// client's version, that do not echo its connection IDs, or that come
// after a packet from the server change nothing (RFC 9000 section 6.2).
func TestVersionNegotiationIgnored(t *testing.T) {
	ccfg, scfg := testConfigs(t, 84)
	const delay = 10 * time.Millisecond
	p := newPair(t, ccfg, scfg, delay)
	cl := p.client
	echo := func(versions ...wire.Version) []byte {
		b, err := wire.AppendVersionNegotiation(nil, &wire.VersionNegotiation{
			DstConnID: cl.cids.local[0].id.Bytes(), SrcConnID: cl.origDCID.Bytes(), Versions: versions,
		}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	listsOurs := echo(wire.Version2, wire.Version1)
	wrongIDs, _ := wire.AppendVersionNegotiation(nil, &wire.VersionNegotiation{
		DstConnID: []byte{1, 2, 3}, SrcConnID: cl.origDCID.Bytes(), Versions: []wire.Version{wire.Version2},
	}, 0)
	late := echo(wire.Version2)
	p.enqueue(flight{at: delay / 2, data: listsOurs})
	p.enqueue(flight{at: delay / 2, data: wrongIDs})
	p.enqueue(flight{at: 3 * delay, data: late})
	p.enqueue(flight{at: 3 * delay, data: []byte{0x80, 0, 0, 0, 0, 9}})
	p.mustRun(func() bool { return p.confirmed() && p.now > 3*delay }, 5*time.Second)
	if p.client.version != wire.Version1 || p.client.Err() != nil || p.client.vn.afterVN {
		t.Fatalf("client moved: version %v, err %v", p.client.version, p.client.Err())
	}
	if st := p.client.Stats(); st.PacketsDropped != 4 {
		t.Errorf("client dropped %d packets, want the 4 Version Negotiation packets", st.PacketsDropped)
	}
}

// TestCompatibleVersionNegotiation: a v1 client lists v2 as compatible; a
// server preferring v2 answers its first flight in v2 (RFC 9368 section
// 2.3, RFC 9369), without an extra round trip.
func TestCompatibleVersionNegotiation(t *testing.T) {
	ccfg, scfg := testConfigs(t, 85)
	scfg.Versions = []wire.Version{wire.Version2, wire.Version1}
	const delay = 15 * time.Millisecond
	p := newPair(t, ccfg, scfg, delay)
	var serverVersions []wire.Version
	p.drop = func(toServer bool, _ int, d []byte) bool {
		if !toServer && wire.IsLongHeader(d[0]) {
			_, v, _ := wire.PeekPacketType(d)
			serverVersions = append(serverVersions, v)
		}
		return false
	}
	var completedAt time.Duration
	p.clientApp = func(now time.Duration, c *Conn) {
		if c.HandshakeComplete() && completedAt == 0 {
			completedAt = p.now
		}
	}
	p.mustRun(p.confirmed, 5*time.Second)
	if p.client.version != wire.Version2 || p.server.version != wire.Version2 || p.server.vn.first != wire.Version1 {
		t.Fatalf("versions client %v server %v (first %v)", p.client.version, p.server.version, p.server.vn.first)
	}
	for _, v := range serverVersions {
		if v != wire.Version2 {
			t.Errorf("server sent a long header packet of %v", v)
		}
	}
	if completedAt != 2*delay {
		t.Errorf("client completed at %v, want %v", completedAt, 2*delay)
	}
	pp, _ := p.client.PeerParams()
	if pp.VersionInformation == nil || pp.VersionInformation.Chosen != wire.Version2 {
		t.Errorf("server version_information %+v", pp.VersionInformation)
	}
}

// TestCompatibleVersionNegotiationSplitHello: over a path where the two
// datagrams of the ClientHello arrive apart, the server acknowledges the
// first in v1 and still switches to v2; the client's Initials that left
// in v1 are read.
func TestCompatibleVersionNegotiationSplitHello(t *testing.T) {
	ccfg, scfg := testConfigs(t, 86)
	scfg.Versions = []wire.Version{wire.Version2, wire.Version1}
	p := newPair(t, ccfg, scfg, 15*time.Millisecond)
	p.extraDelay = func(toServer bool, n int, _ []byte) time.Duration {
		if toServer && n == 1 {
			return 5 * time.Millisecond
		}
		return 0
	}
	var serverVersions []wire.Version
	p.drop = func(toServer bool, _ int, d []byte) bool {
		if !toServer && wire.IsLongHeader(d[0]) {
			_, v, _ := wire.PeekPacketType(d)
			serverVersions = append(serverVersions, v)
		}
		return false
	}
	p.mustRun(p.confirmed, 5*time.Second)
	if p.client.version != wire.Version2 || p.server.version != wire.Version2 {
		t.Fatalf("versions client %v server %v", p.client.version, p.server.version)
	}
	if len(serverVersions) < 2 || serverVersions[0] != wire.Version1 || serverVersions[1] != wire.Version2 {
		t.Errorf("server datagrams in %v, want an ACK in v1, then v2", serverVersions)
	}
	if st := p.server.Stats(); st.PacketsLost != 0 || st.Recovery.PTOs != 0 {
		t.Errorf("server lost %d, PTOs %d", st.PacketsLost, st.Recovery.PTOs)
	}
}

// TestVersionInformationChecks: a client's version_information must name
// the version of its first Initial, a server's the version in use (RFC
// 9368 section 4).
func TestVersionInformationChecks(t *testing.T) {
	ccfg, scfg := testConfigs(t, 87)
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(func() bool { return p.server != nil }, time.Second)
	for _, tc := range []struct {
		c    *Conn
		vi   *wire.VersionInformation
		fail bool
	}{
		{p.server, &wire.VersionInformation{Chosen: wire.Version2, Available: []wire.Version{wire.Version2}}, true},
		{p.server, &wire.VersionInformation{Chosen: wire.Version1, Available: []wire.Version{wire.Version1}}, false},
		{p.server, nil, false},
		{p.client, &wire.VersionInformation{Chosen: wire.Version2}, true},
		{p.client, &wire.VersionInformation{Chosen: wire.Version1}, false},
		{p.client, nil, false},
	} {
		tp := wire.TransportParameters{VersionInformation: tc.vi}
		err := tc.c.checkPeerVersionInfo(&tp)
		var te *wire.TransportError
		if tc.fail != (err != nil) || (err != nil && (!errors.As(err, &te) || te.Code != wire.CodeVersionNegotiationError)) {
			t.Errorf("client=%v %+v: %v", tc.c.isClient, tc.vi, err)
		}
	}
}

// TestVersionStateChoose: a client answers a Version Negotiation packet
// with the first of its versions the server lists, ignores one that lists
// its version, and gives up when none is common.
func TestVersionStateChoose(t *testing.T) {
	var v versionState
	v.init(wire.Version1, true, nil)
	if next, ok, err := v.choose([]wire.Version{0x1a2a3a4a, wire.Version2}, wire.Version1); !ok || err != nil || next != wire.Version2 {
		t.Errorf("choose: %v %v %v, want a restart in v2", next, ok, err)
	}
	if _, ok, _ := v.choose([]wire.Version{wire.Version1}, wire.Version1); ok {
		t.Error("a packet listing the version in use was not ignored")
	}
	var ve *VersionError
	if _, ok, err := v.choose([]wire.Version{0x1a2a3a4a}, wire.Version1); !ok || !errors.As(err, &ve) {
		t.Errorf("no common version: %v %v", ok, err)
	}
}
