package core

import (
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// resumeConfigs returns configurations for session resumption: a client
// session cache, a server whose ticket keys outlive a connection, a fixed
// TLS clock so that runs replay.
func resumeConfigs(t testing.TB, seed uint64) (client, server *Config) {
	client, server = testConfigs(t, seed)
	clock := func() time.Time { return testEpoch }
	client.TLS.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	client.TLS.Time = clock
	server.TLS.MinVersion = tls.VersionTLS13
	server.TLS.Time = clock
	return client, server
}

// hasSession reports whether the client's cache holds a session ticket.
func hasSession(cfg *Config) bool {
	_, ok := cfg.TLS.ClientSessionCache.Get("satquic.test")
	return ok
}

// earlyUpload is a client that opens a unidirectional stream as soon as
// it may (in 0-RTT when it can) and sends data, and a server that reads
// it, noting when the first bytes became readable.
type earlyUpload struct {
	t            testing.TB
	data         []byte
	id           uint64
	opened       bool
	written      int
	openedIn0RTT bool

	got     []byte
	eof     bool
	firstAt time.Duration
}

func (u *earlyUpload) client(now time.Duration, c *Conn) {
	if !u.opened {
		id, err := c.OpenStream(now, false)
		if err != nil {
			if !errors.Is(err, ErrHandshakeIncomplete) {
				u.t.Fatalf("OpenStream: %v", err)
			}
			return
		}
		u.id, u.opened, u.openedIn0RTT = id, true, !c.HandshakeComplete()
	}
	if u.written < len(u.data) {
		n, err := c.StreamWrite(u.id, u.data[u.written:])
		if err != nil {
			u.t.Fatalf("StreamWrite: %v", err)
		}
		if u.written += n; u.written == len(u.data) {
			if err := c.CloseWrite(u.id); err != nil {
				u.t.Fatal(err)
			}
		}
	}
}

func (u *earlyUpload) server(now time.Duration, c *Conn) {
	if u.eof || !u.opened {
		return
	}
	if _, err := c.streams.get(u.id); err != nil {
		return
	}
	if u.firstAt == 0 && c.StreamReadable(u.id) > 0 {
		u.firstAt = now
	}
	u.eof = readAll(u.t, now, c, u.id, &u.got)
}

// primeSession runs a first connection until the client stored the
// server's session ticket.
func primeSession(t *testing.T, ccfg, scfg *Config, delay time.Duration) {
	t.Helper()
	p := newPair(t, ccfg, scfg, delay)
	p.mustRun(func() bool { return p.confirmed() && hasSession(ccfg) }, 10*time.Second)
}

// runUpload runs a connection that uploads data and returns the pair and
// the upload.
func runUpload(t *testing.T, ccfg, scfg *Config, delay time.Duration, data []byte) (*pair, *earlyUpload) {
	t.Helper()
	p := newPair(t, ccfg, scfg, delay)
	u := &earlyUpload{t: t, data: data}
	p.clientApp, p.serverApp = u.client, u.server
	p.mustRun(func() bool { return u.eof && p.confirmed() }, 10*time.Second)
	if string(u.got) != string(data) {
		t.Fatalf("server read %d bytes, want %d", len(u.got), len(data))
	}
	return p, u
}

// Test0RTT: a resumed connection with 0-RTT delivers the client's first
// stream bytes with its first flight, one round trip before a resumed
// connection without 0-RTT, whose data follows the Finished.
func Test0RTT(t *testing.T) {
	const delay = 30 * time.Millisecond
	data := payload(3000, 5)
	for _, zeroRTT := range []bool{true, false} {
		ccfg, scfg := resumeConfigs(t, 110)
		ccfg.Allow0RTT, scfg.Allow0RTT = zeroRTT, zeroRTT
		primeSession(t, ccfg, scfg, delay)
		p, u := runUpload(t, ccfg, scfg, delay, data)
		if !p.client.ConnectionState().DidResume || !p.server.ConnectionState().DidResume {
			t.Fatalf("0-RTT %v: not resumed", zeroRTT)
		}
		want := 3 * delay
		if zeroRTT {
			want = delay
		}
		if u.firstAt != want || u.openedIn0RTT != zeroRTT {
			t.Errorf("0-RTT %v: server read the first bytes at %v (stream opened in 0-RTT: %v), want %v", zeroRTT, u.firstAt, u.openedIn0RTT, want)
		}
		if p.client.EarlyDataAccepted() != zeroRTT || p.server.EarlyDataAccepted() != zeroRTT {
			t.Errorf("0-RTT %v: accepted client %v server %v", zeroRTT, p.client.EarlyDataAccepted(), p.server.EarlyDataAccepted())
		}
		if st := p.client.Stats(); st.PacketsLost != 0 || st.StreamBytesRetransmitted != 0 {
			t.Errorf("0-RTT %v: client lost %d packets, retransmitted %d stream bytes", zeroRTT, st.PacketsLost, st.StreamBytesRetransmitted)
		}
	}
}

// Test0RTTRejected: a server that no longer allows 0-RTT declines it even
// with a ticket that allowed it; the client's 0-RTT data is sent again in
// 1-RTT packets and arrives whole, after the handshake.
func Test0RTTRejected(t *testing.T) {
	const delay = 30 * time.Millisecond
	ccfg, scfg := resumeConfigs(t, 111)
	ccfg.Allow0RTT, scfg.Allow0RTT = true, true
	primeSession(t, ccfg, scfg, delay)
	scfg2 := *scfg
	scfg2.Allow0RTT = false
	p, u := runUpload(t, ccfg, &scfg2, delay, payload(3000, 6))
	if !u.openedIn0RTT || !hasEvent(p.clientEvents, EventEarlyDataRejected) {
		t.Fatalf("opened in 0-RTT %v, rejection event %v", u.openedIn0RTT, hasEvent(p.clientEvents, EventEarlyDataRejected))
	}
	if p.client.EarlyDataAccepted() || p.server.EarlyDataAccepted() {
		t.Error("0-RTT reported accepted")
	}
	if u.firstAt != 3*delay {
		t.Errorf("server read the first bytes at %v, want %v", u.firstAt, 3*delay)
	}
	if st := p.server.Stats(); st.PacketsDropped == 0 {
		t.Error("server did not drop the 0-RTT packets")
	}
}

// Test0RTTOffByDefault: a server's tickets do not allow 0-RTT unless its
// Config does (replay safety, RFC 9001 section 9.2), so a willing client
// resumes without 0-RTT.
func Test0RTTOffByDefault(t *testing.T) {
	const delay = 30 * time.Millisecond
	ccfg, scfg := resumeConfigs(t, 112)
	ccfg.Allow0RTT = true
	primeSession(t, ccfg, scfg, delay)
	p, u := runUpload(t, ccfg, scfg, delay, payload(100, 7))
	if !p.client.ConnectionState().DidResume || u.openedIn0RTT || p.client.early.attempted {
		t.Errorf("resumed %v, 0-RTT attempted %v", p.client.ConnectionState().DidResume, p.client.early.attempted)
	}
}

// Test0RTTRememberedLimits: 0-RTT data stays within the limits the
// server had (RFC 9000 section 7.4.1): with a stream window of 1000 bytes
// remembered, the client's 0-RTT packets carry at most that much, and the
// rest follows in 1-RTT packets as the server raises the window.
func Test0RTTRememberedLimits(t *testing.T) {
	const delay = 30 * time.Millisecond
	ccfg, scfg := resumeConfigs(t, 113)
	ccfg.Allow0RTT, scfg.Allow0RTT = true, true
	scfg.InitialStreamReceiveWindow = 1000
	scfg.MaxStreamReceiveWindow = 1000
	primeSession(t, ccfg, scfg, delay)
	p := newPair(t, ccfg, scfg, delay)
	var early int
	p.drop = func(toServer bool, _ int, d []byte) bool {
		if toServer {
			early += zeroRTTBytes(t, d)
		}
		return false
	}
	u := &earlyUpload{t: t, data: payload(5000, 8)}
	p.clientApp, p.serverApp = u.client, u.server
	p.mustRun(func() bool { return u.eof }, 10*time.Second)
	if early == 0 || early > 1000+200 {
		t.Errorf("%d bytes of 0-RTT packets for a 1000-byte stream window", early)
	}
	if string(u.got) != string(u.data) {
		t.Fatal("data corrupted")
	}
}

// zeroRTTBytes returns the size of the 0-RTT packets in a datagram.
func zeroRTTBytes(t testing.TB, d []byte) int {
	n := 0
	for len(d) > 0 && wire.IsLongHeader(d[0]) {
		h, pnOff, err := wire.ParseLongHeader(d)
		if err != nil {
			return n
		}
		size := pnOff + int(h.Length)
		if h.Type == wire.PacketType0RTT {
			n += size
		}
		d = d[size:]
	}
	return n
}

// TestResumeRTT: with Config.ResumeRTT a resumed connection starts from
// the smoothed RTT the previous connection had when it stored its ticket
// (RFC 9002 section 6.2.2).
func TestResumeRTT(t *testing.T) {
	const delay = 300 * time.Millisecond
	ccfg, scfg := resumeConfigs(t, 114)
	ccfg.ResumeRTT = true
	p1 := newPair(t, ccfg, scfg, delay)
	var stored time.Duration
	p1.mustRun(func() bool {
		if hasSession(ccfg) && stored == 0 {
			stored = p1.client.Stats().SmoothedRTT
		}
		return p1.confirmed() && stored != 0
	}, 10*time.Second)
	c, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Stats().SmoothedRTT; got != stored || stored < 2*delay {
		t.Errorf("resumed connection starts at %v, want the stored %v", got, stored)
	}
	ccfg.ResumeRTT = false
	c2, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.Stats().SmoothedRTT; got != c2.cfg.Recovery.InitialRTT {
		t.Errorf("without ResumeRTT: %v, want %v", got, c2.cfg.Recovery.InitialRTT)
	}
}

// Test0RTTHeld: 0-RTT packets that overtake the end of the ClientHello
// are held until it yields the 0-RTT keys (RFC 9001 section 5.7).
func Test0RTTHeld(t *testing.T) {
	const delay, late = 30 * time.Millisecond, time.Millisecond
	ccfg, scfg := resumeConfigs(t, 115)
	ccfg.Allow0RTT, scfg.Allow0RTT = true, true
	primeSession(t, ccfg, scfg, delay)
	p := newPair(t, ccfg, scfg, delay)
	p.extraDelay = func(toServer bool, n int, _ []byte) time.Duration {
		if toServer && n == 1 { // the end of the ClientHello
			return late
		}
		return 0
	}
	u := &earlyUpload{t: t, data: payload(4000, 10)}
	p.clientApp, p.serverApp = u.client, u.server
	p.mustRun(func() bool { return u.eof && p.confirmed() }, 10*time.Second)
	if string(u.got) != string(u.data) || !p.server.EarlyDataAccepted() {
		t.Fatal("0-RTT data not delivered")
	}
	st := p.server.Stats()
	if st.PacketsBuffered == 0 || st.PacketsDropped != 0 {
		t.Errorf("server held %d and dropped %d packets", st.PacketsBuffered, st.PacketsDropped)
	}
	if u.firstAt != delay+late {
		t.Errorf("server read the first bytes at %v, want %v", u.firstAt, delay+late)
	}
}

// Test0RTTKeysDiscarded: a server drops its 0-RTT keys three PTOs after
// the first 1-RTT packet (RFC 9001 section 4.9.3); 0-RTT packets that
// come later are dropped.
func Test0RTTKeysDiscarded(t *testing.T) {
	const delay = 30 * time.Millisecond
	ccfg, scfg := resumeConfigs(t, 116)
	ccfg.Allow0RTT, scfg.Allow0RTT = true, true
	primeSession(t, ccfg, scfg, delay)
	p, _ := runUpload(t, ccfg, scfg, delay, payload(1000, 11))
	s := p.server
	at, armed := s.early.timer()
	if !armed || s.early.read == nil {
		t.Fatalf("discard armed %v, keys %v", armed, s.early.read != nil)
	}
	p.mustRun(func() bool { return s.early.read == nil }, at+time.Second)
	if p.now != at {
		t.Errorf("0-RTT keys dropped at %v, want %v", p.now, at)
	}
	if s.keysFor(wire.PacketType0RTT) != keysGone {
		t.Error("0-RTT packets still readable")
	}
}

// Test0RTTReducedLimits: a server that accepted 0-RTT must not lower the
// limits the client's 0-RTT data relied on (RFC 9000 section 7.4.1).
func Test0RTTReducedLimits(t *testing.T) {
	ccfg, _ := testConfigs(t, 117)
	c, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	c.early.attempted = true
	c.early.params = wire.DefaultTransportParameters()
	c.early.params.InitialMaxData = 1000
	c.peerParams = c.early.params
	if err := c.early.onHandshakeDone(&c.peerParams); err != nil {
		t.Fatalf("equal limits: %v", err)
	}
	c.peerParams.InitialMaxStreamsUni = 10
	c.early.params.InitialMaxStreamsUni = 20
	var te *wire.TransportError
	if err := c.early.onHandshakeDone(&c.peerParams); !errors.As(err, &te) || te.Code != wire.CodeProtocolViolation {
		t.Fatalf("reduced initial_max_streams_uni: %v", err)
	}
	// Rejected 0-RTT relied on nothing.
	c.early.rejected = true
	if err := c.early.onHandshakeDone(&c.peerParams); err != nil {
		t.Fatalf("after rejection: %v", err)
	}
}

// Test0RTTAfterRetry: 0-RTT packets sent before a Retry were not
// processed; the client sends their data again after it (RFC 9000 section
// 17.2.5.3), and the server accepts the 0-RTT that follows.
func Test0RTTAfterRetry(t *testing.T) {
	const delay = 30 * time.Millisecond
	ccfg, scfg := resumeConfigs(t, 118)
	ccfg.Allow0RTT, scfg.Allow0RTT = true, true
	primeSession(t, ccfg, scfg, delay)
	p := newPair(t, ccfg, scfg, delay)
	p.listen = retryListener(t, p, newValidator(t, 118, 10*time.Second))
	u := &earlyUpload{t: t, data: payload(3000, 12)}
	p.clientApp, p.serverApp = u.client, u.server
	p.mustRun(func() bool { return u.eof && p.confirmed() }, 10*time.Second)
	if string(u.got) != string(u.data) || !p.client.retry.done || !p.server.EarlyDataAccepted() {
		t.Fatalf("data %d/%d bytes, retry %v, 0-RTT accepted %v", len(u.got), len(u.data), p.client.retry.done, p.server.EarlyDataAccepted())
	}
	// After the Retry round trip, the 0-RTT data arrives with the new
	// ClientHello.
	if u.firstAt != 3*delay {
		t.Errorf("server read the first bytes at %v, want %v", u.firstAt, 3*delay)
	}
}

// TestEarlyKeyDiscardTimer: a server's 0-RTT keys go three PTOs after its
// first 1-RTT packet, and only a server that has them arms the timer.
func TestEarlyKeyDiscardTimer(t *testing.T) {
	var e earlyState
	e.onOneRTTReceived(time.Second, 100*time.Millisecond)
	if _, ok := e.timer(); ok {
		t.Fatal("timer armed without 0-RTT keys")
	}
	e.read = &crypto.Keys{}
	e.onOneRTTReceived(time.Second, 100*time.Millisecond)
	e.onOneRTTReceived(2*time.Second, 100*time.Millisecond) // a later packet changes nothing
	at, ok := e.timer()
	if !ok || at != 1300*time.Millisecond {
		t.Fatalf("timer %v %v, want 1.3s", at, ok)
	}
	e.onTimer(at - 1)
	if e.read == nil {
		t.Fatal("keys dropped early")
	}
	e.onTimer(at)
	if _, ok := e.timer(); ok || e.read != nil {
		t.Errorf("after the timer: armed %v, keys %v", ok, e.read != nil)
	}
}

// TestEarlyOneRTTPackets: the application packets from the first 1-RTT one
// on are 1-RTT, those before were 0-RTT.
func TestEarlyOneRTTPackets(t *testing.T) {
	var e earlyState
	if e.isOneRTT(0) {
		t.Fatal("a packet is 1-RTT before any was sent")
	}
	e.onOneRTTSent(5)
	e.onOneRTTSent(6)
	if e.isOneRTT(4) || !e.isOneRTT(5) || !e.isOneRTT(9) {
		t.Errorf("1-RTT from 5: isOneRTT(4) %v, (5) %v, (9) %v", e.isOneRTT(4), e.isOneRTT(5), e.isOneRTT(9))
	}
}
