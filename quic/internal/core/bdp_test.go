package core

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// testSealer is a path state sealer with a key of keyByte.
func testSealer(t testing.TB, keyByte byte) *crypto.PathStateSealer {
	t.Helper()
	s, err := crypto.NewPathStateSealer(bytes.Repeat([]byte{keyByte}, crypto.PathStateKeyLen))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withCarefulResume turns Careful Resume on in a client's and a server's
// configurations, the server sealing with a key of keyByte.
func withCarefulResume(t testing.TB, ccfg, scfg *Config, keyByte byte) {
	ccfg.CarefulResume = &CarefulResumeConfig{}
	scfg.CarefulResume = &CarefulResumeConfig{Sealer: testSealer(t, keyByte), Epoch: testEpoch}
}

// sealedState seals a path state for the tests: 4 MB per 650 ms issued at
// issued (wall clock) to addr, sealed with a key of keyByte.
func sealedState(t testing.TB, keyByte byte, addr netip.Addr, issued time.Time) []byte {
	t.Helper()
	st := crypto.PathState{IssuedAt: issued, Lifetime: time.Hour, Cwnd: 4_000_000, RTT: 650 * time.Millisecond, Addr: addr}
	b, err := testSealer(t, keyByte).Seal(nil, st, newSeeded(5))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBDPNegotiated: both endpoints offer the parameter when configured,
// a client only if it has a session cache to keep states in, and neither
// uses the extension unless both did.
func TestBDPNegotiated(t *testing.T) {
	for _, tc := range []struct {
		client, cache, server, want bool
	}{{true, true, true, true}, {true, false, true, false}, {true, true, false, false}, {false, true, true, false}} {
		ccfg, scfg := resumeConfigs(t, 40)
		withCarefulResume(t, ccfg, scfg, 1)
		if !tc.client {
			ccfg.CarefulResume = nil
		}
		if !tc.cache {
			ccfg.TLS.ClientSessionCache = nil
		}
		if !tc.server {
			scfg.CarefulResume = nil
		}
		p := newPair(t, ccfg, scfg, 5*time.Millisecond)
		p.mustRun(p.confirmed, 5*time.Second)
		cs, ss := p.client.Stats().CarefulResume, p.server.Stats().CarefulResume
		if cs.Negotiated != tc.want || ss.Negotiated != tc.want {
			t.Errorf("client %v (cache %v) server %v: negotiated %v/%v, want %v", tc.client, tc.cache, tc.server, cs.Negotiated, ss.Negotiated, tc.want)
		}
	}
}

// TestBDPServerNeedsSealer: a server cannot offer Careful Resume without
// a key to seal with.
func TestBDPServerNeedsSealer(t *testing.T) {
	_, scfg := testConfigs(t, 41)
	scfg.CarefulResume = &CarefulResumeConfig{}
	_, err := NewServerConn(scfg, 0, ServerParams{RemoteAddr: clientAddr, OriginalDestConnID: cid(1)})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("got %v, want ErrConfig", err)
	}
	scfg.CarefulResume = &CarefulResumeConfig{Sealer: testSealer(t, 1), Lifetime: -time.Second}
	if err := scfg.Check(); !errors.Is(err, ErrConfig) {
		t.Fatalf("negative lifetime: %v", err)
	}
}

// TestBDPRejected: a server ignores a returned state that is forged,
// altered, sealed with another key, expired, issued to another address or
// of another format; it counts why, and its congestion control does not
// resume. The connection goes on.
func TestBDPRejected(t *testing.T) {
	addr := clientAddr.Addr()
	good := sealedState(t, 1, addr, testEpoch)
	altered := append([]byte(nil), good...)
	altered[40] ^= 0x10
	other := append([]byte{7}, good[1:]...)
	cases := []struct {
		name string
		blob []byte
		want func(r BDPRejections) uint64
	}{
		{"forged", bytes.Repeat([]byte{0x01}, len(good)), func(r BDPRejections) uint64 { return r.Invalid }},
		{"altered", altered, func(r BDPRejections) uint64 { return r.Invalid }},
		{"other key", sealedState(t, 2, addr, testEpoch), func(r BDPRejections) uint64 { return r.Invalid }},
		{"expired", sealedState(t, 1, addr, testEpoch.Add(-2*time.Hour)), func(r BDPRejections) uint64 { return r.Expired }},
		{"other address", sealedState(t, 1, netip.MustParseAddr("192.0.2.99"), testEpoch), func(r BDPRejections) uint64 { return r.Address }},
		{"other format", other, func(r BDPRejections) uint64 { return r.Version }},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ccfg, scfg := testConfigs(t, uint64(50+i))
			withCarefulResume(t, ccfg, scfg, 1)
			p := newPair(t, ccfg, scfg, 5*time.Millisecond)
			p.mustRun(p.confirmed, 5*time.Second)
			pl := frameBytes(t, &wire.BDPFrame{Blob: tc.blob})
			p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, pl, 0)})
			if err := p.server.Err(); err != nil {
				t.Fatalf("server closed: %v", err)
			}
			s := p.server.Stats().CarefulResume
			if tc.want(s.Rejected) != 1 || s.Rejected.Total() != 1 || s.BDPFramesReceived != 1 || s.BDPFramesAccepted != 0 {
				t.Errorf("stats %+v", s)
			}
			if s.Phase != 0 || s.Resumed.SavedCwnd != 0 {
				t.Errorf("resumed from a rejected state: phase %v, state %+v", s.Phase, s.Resumed)
			}
		})
	}
}

// TestBDPServerOff: a server with Careful Resume off ignores a returned
// state, which a client may hold from an earlier configuration, and
// counts it.
func TestBDPServerOff(t *testing.T) {
	ccfg, scfg := testConfigs(t, 60)
	ccfg.CarefulResume = &CarefulResumeConfig{}
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	pl := frameBytes(t, &wire.BDPFrame{Blob: sealedState(t, 1, clientAddr.Addr(), testEpoch)})
	p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, pl, 0)})
	if err := p.server.Err(); err != nil {
		t.Fatalf("server closed: %v", err)
	}
	if s := p.server.Stats().CarefulResume; s.Rejected.Disabled != 1 || s.Phase != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestBDPFrameErrors: a client closes with FRAME_ENCODING_ERROR on a
// malformed BDP frame, and on a BDP frame it did not offer to take, which
// is then a frame of unknown type (RFC 9000 section 12.4), as it is to a
// peer without the extension.
func TestBDPFrameErrors(t *testing.T) {
	cases := []struct {
		name    string
		offered bool
		payload []byte
		code    uint64
	}{
		{"truncated", true, []byte{0x7f, 0xe3, 0x05, 1, 2}, wire.CodeFrameEncodingError},
		{"empty blob", true, []byte{0x7f, 0xe3, 0x00}, wire.CodeFrameEncodingError},
		{"blob too long", true, append([]byte{0x7f, 0xe3, 0x41, 0x01}, make([]byte, wire.MaxBDPBlobLen+1)...), wire.CodeFrameEncodingError},
		{"not offered", false, []byte{0x7f, 0xe3, 0x01, 0xaa}, wire.CodeFrameEncodingError},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ccfg, scfg := resumeConfigs(t, uint64(70+i))
			withCarefulResume(t, ccfg, scfg, 1)
			if !tc.offered {
				ccfg.CarefulResume = nil
			}
			p := newPair(t, ccfg, scfg, 5*time.Millisecond)
			p.mustRun(p.confirmed, 5*time.Second)
			p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, tc.payload, 0)})
			var ce *ConnError
			if !errors.As(p.client.Err(), &ce) || ce.Code != tc.code || ce.Remote {
				t.Fatalf("client closed with %v, want local code %s", p.client.Err(), wire.TransportErrorName(tc.code))
			}
		})
	}
}

// TestBDPClientKeepsBlob: a client stores each blob the server sends with
// its session ticket, the latest replacing the one before, and takes it
// from the ticket when it resumes, to return it.
func TestBDPClientKeepsBlob(t *testing.T) {
	ccfg, scfg := resumeConfigs(t, 80)
	withCarefulResume(t, ccfg, scfg, 1)
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(func() bool { return p.confirmed() && hasSession(ccfg) }, 5*time.Second)
	if _, ok := cachedBlob(t, ccfg); ok {
		t.Fatal("a blob before any BDP frame")
	}
	for _, blob := range [][]byte{{1, 2, 3}, {4, 5}} {
		pl := frameBytes(t, &wire.BDPFrame{Blob: blob})
		p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, pl, 0)})
		if got, ok := cachedBlob(t, ccfg); !ok || !bytes.Equal(got, blob) {
			t.Fatalf("cached blob %x, want %x", got, blob)
		}
	}
	if s := p.client.Stats().CarefulResume; s.BDPFramesReceived != 2 {
		t.Errorf("client stats %+v", s)
	}
	next, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release()
	if b := &next.bdp; !b.pending || !bytes.Equal(b.blob, []byte{4, 5}) || !bytes.Equal(b.saved, []byte{4, 5}) {
		t.Fatalf("resumed connection: pending %v, blob %x, saved %x", b.pending, b.blob, b.saved)
	}
}

// cachedBlob returns the BDP blob of the session ticket in the client's
// cache.
func cachedBlob(t testing.TB, ccfg *Config) ([]byte, bool) {
	t.Helper()
	cs, ok := ccfg.TLS.ClientSessionCache.Get("satquic.test")
	if !ok {
		t.Fatal("no session ticket")
	}
	_, s, err := cs.ResumptionState()
	if err != nil || s == nil {
		t.Fatalf("resumption state: %v", err)
	}
	return findBDPBlob(s.Extra)
}

// TestBDPUpdateRule: the first state goes at once; while data is sent
// the next waits UpdateRTTs smoothed RTTs and a change of a quarter; when
// the sending stops any change goes at once, and later ones a smoothed
// RTT apart.
func TestBDPUpdateRule(t *testing.T) {
	cfg, err := (&CarefulResumeConfig{}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	b := bdpState{cfg: cfg}
	srtt := 650 * time.Millisecond
	st := func(cwnd int64, rtt time.Duration) recovery.ResumeState {
		return recovery.ResumeState{SavedCwnd: cwnd, SavedRTT: rtt}
	}
	first := st(1_000_000, srtt)
	if !b.updateDue(time.Second, first, srtt, false) {
		t.Fatal("first state not sent")
	}
	t0 := time.Second
	b.last, b.lastAt, b.sent = first, t0, true
	steps := []struct {
		at   time.Duration
		st   recovery.ResumeState
		idle bool
		want bool
	}{
		{t0 + 4*srtt, first, false, false},                   // unchanged
		{t0 + 4*srtt - 1, st(2_000_000, srtt), false, false}, // too soon
		{t0 + 4*srtt, st(1_200_000, srtt), false, false},     // small change
		{t0 + 4*srtt, st(1_000_000, 480*time.Millisecond), false, true},
		{t0 + 4*srtt, st(1_250_000, srtt), false, true}, // a quarter more
		{t0 + srtt/2, st(1_010_000, srtt), true, true},  // the sending stopped
		{t0 + srtt/2, st(1_020_000, srtt), true, false}, // stopped, too soon
		{t0 + srtt, st(1_020_000, srtt), true, true},    // stopped, a smoothed RTT later
	}
	for i, c := range steps {
		if got := b.updateDue(c.at, c.st, srtt, c.idle); got != c.want {
			t.Errorf("step %d: due %v, want %v", i, got, c.want)
		}
	}
}

// TestBDPReturned: a resuming client returns the blob of its ticket once:
// in its first 0-RTT packet, arriving with the ClientHello; in 1-RTT when
// the server rejected the 0-RTT packet that carried it; in its first
// 1-RTT packet without 0-RTT. The server takes it each time (a state of
// this path sealed for this client a minute ago).
func TestBDPReturned(t *testing.T) {
	const delay = 30 * time.Millisecond
	for _, tc := range []struct {
		name                   string
		client0RTT, server0RTT bool
		at                     time.Duration // when the server has the blob
	}{
		{"0-RTT", true, true, delay},
		{"0-RTT rejected", true, false, 3 * delay},
		{"1-RTT", false, true, 3 * delay},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ccfg, scfg := resumeConfigs(t, 90)
			ccfg.Allow0RTT, scfg.Allow0RTT = true, true
			withCarefulResume(t, ccfg, scfg, 1)
			p := newPair(t, ccfg, scfg, delay)
			p.mustRun(func() bool { return p.confirmed() && hasSession(ccfg) }, 5*time.Second)
			// The state of this path: a 60 ms round trip.
			st := crypto.PathState{IssuedAt: testEpoch.Add(-time.Minute), Lifetime: time.Hour, Cwnd: 4_000_000, RTT: 2 * delay, Addr: clientAddr.Addr()}
			blob, err := testSealer(t, 1).Seal(nil, st, newSeeded(6))
			if err != nil {
				t.Fatal(err)
			}
			pl := frameBytes(t, &wire.BDPFrame{Blob: blob})
			p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, pl, 0)})

			ccfg.Allow0RTT, scfg.Allow0RTT = tc.client0RTT, tc.server0RTT
			p = newPair(t, ccfg, scfg, delay)
			var at time.Duration
			p.mustRun(func() bool {
				if at == 0 && p.server != nil && p.server.Stats().CarefulResume.BDPFramesReceived > 0 {
					at = p.now
				}
				return p.confirmed() && at > 0
			}, 5*time.Second)
			s, c := p.server.Stats().CarefulResume, p.client.Stats().CarefulResume
			if at != tc.at || s.BDPFramesReceived != 1 || s.BDPFramesAccepted != 1 || c.BDPFramesSent != 1 {
				t.Fatalf("server had the blob at %v (want %v): server %+v, client %+v", at, tc.at, s, c)
			}
			if s.Resumed.SavedCwnd != 4_000_000 || s.Phase == 0 {
				t.Errorf("resumed from %+v, phase %v", s.Resumed, s.Phase)
			}
		})
	}
}

// FuzzBDPFrames feeds authenticated 1-RTT payloads to both ends of a
// connection with Careful Resume on: BDP frames well formed or not, with
// blobs authentic or not, never panic or hang either end.
func FuzzBDPFrames(f *testing.F) {
	blob := sealedState(f, 1, clientAddr.Addr(), testEpoch)
	good := frameBytes(f, &wire.BDPFrame{Blob: blob})
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(append(append([]byte{}, good...), good...))
	f.Add([]byte{0x7f, 0xe3, 0x01, 0x00, 0x01})
	f.Fuzz(func(t *testing.T, payload []byte) {
		ccfg, scfg := resumeConfigs(t, 10)
		withCarefulResume(t, ccfg, scfg, 1)
		p := newPair(t, ccfg, scfg, 5*time.Millisecond)
		p.mustRun(p.confirmed, 5*time.Second)
		p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, payload, 0)})
		p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, payload, 0)})
		for range 50 {
			if !p.step() {
				break
			}
		}
	})
}

// TestBDPOnlyFirstOpened: a server opens only the first state a client
// returns; later BDP frames are counted as unused without being opened, so
// a client repeating them costs the server no decryption (an altered one
// is not even found invalid).
func TestBDPOnlyFirstOpened(t *testing.T) {
	addr := clientAddr.Addr()
	good := sealedState(t, 1, addr, testEpoch)
	altered := append([]byte(nil), good...)
	altered[40] ^= 0x10
	ccfg, scfg := testConfigs(t, 70)
	withCarefulResume(t, ccfg, scfg, 1)
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	for _, blob := range [][]byte{good, altered, good} {
		pl := frameBytes(t, &wire.BDPFrame{Blob: blob})
		p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, pl, 0)})
	}
	if err := p.server.Err(); err != nil {
		t.Fatalf("server closed: %v", err)
	}
	s := p.server.Stats().CarefulResume
	if s.BDPFramesReceived != 3 || s.Rejected.Total() != 3-s.BDPFramesAccepted || s.Rejected.Invalid != 0 {
		t.Errorf("stats %+v", s)
	}
}
