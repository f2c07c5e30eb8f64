package quic

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Address validation, session resumption, 0-RTT, version negotiation and
// qlog through the public API, over memnet in virtual time: a 10 ms link
// each way, so that a round trip is exactly 20 ms.

var link10msOnly = netsim.LinkConfig{Delay: 10 * time.Millisecond}

// dialMem dials the environment's server with tlsConf, at once or early,
// and returns the client's connection and the server's as Accept gives it.
func (e *memEnv) dialMem(tlsConf *tls.Config, conf *Config, early bool) (*Conn, <-chan *Conn) {
	e.t.Helper()
	accepted := e.acceptNext()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dial := e.client.Dial
	if early {
		dial = e.client.DialEarly
	}
	c, err := dial(ctx, net.UDPAddrFromAddrPort(memServerAddr), tlsConf, conf)
	if err != nil {
		e.t.Fatalf("Dial: %v", err)
	}
	return c, accepted
}

// acceptNext accepts the server's next connection in the background; the
// channel gives it, or closes if Accept fails.
func (e *memEnv) acceptNext() <-chan *Conn {
	accepted := make(chan *Conn, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := e.l.Accept(ctx)
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	return accepted
}

// resumingTLS is a client TLS configuration with a session cache.
func resumingTLS() *tls.Config {
	c := clientTLS()
	c.ClientSessionCache = tls.NewLRUClientSessionCache(8)
	return c
}

// waitTicket waits until the client's cache holds the server's session
// ticket, which comes after the handshake.
func waitTicket(t *testing.T, tc *tls.Config) {
	t.Helper()
	for range 100 {
		if _, ok := tc.ClientSessionCache.Get(tc.ServerName); ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no session ticket")
}

// echoServer answers every stream of the next connection the Listener
// accepts with what it read.
func echoServer(accepted <-chan *Conn, got chan<- *Conn) {
	go func() {
		s, ok := <-accepted
		if !ok {
			close(got)
			return
		}
		got <- s
		for {
			st, err := s.AcceptStream(context.Background())
			if err != nil {
				return
			}
			go func() {
				_, _ = io.Copy(st, st)
				_ = st.Close()
			}()
		}
	}()
}

// TestRetryAndNewToken: a server that requires address validation answers
// the first Initial with a Retry, which costs the client a round trip; the
// NEW_TOKEN token of that connection lets the next one skip it.
func TestRetryAndNewToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked []string
		sconf := &Config{RequireAddressValidation: func(a net.Addr) bool {
			asked = append(asked, a.String())
			return true
		}}
		e := newMemEnv(t, link10msOnly, sconf)
		cconf := &Config{TokenStore: NewTokenCache(4)}
		for i, want := range []time.Duration{40 * time.Millisecond, 20 * time.Millisecond} {
			asked = nil
			c, accepted := e.dialMem(clientTLS(), cconf, false)
			s := <-accepted
			if hs := c.Stats().HandshakeDuration; hs != want {
				t.Errorf("connection %d: client handshake took %v, want %v", i, hs, want)
			}
			echoOnce(t, c, s, 5000)
			// The token comes after the handshake is confirmed.
			time.Sleep(50 * time.Millisecond)
			_ = c.CloseWithError(0, "")
			// The ClientHello may take two datagrams, each a first
			// Initial: each gets its Retry.
			if i == 0 && (len(asked) == 0 || asked[0] != memClientAddr.String()) {
				t.Errorf("RequireAddressValidation asked about %v, want the client", asked)
			}
			if i == 1 && len(asked) != 0 {
				t.Errorf("RequireAddressValidation asked about %v, though the client brought a token", asked)
			}
		}
	})
}

// TestInvalidRetryToken: an Initial whose Retry token does not open is
// refused with INVALID_TOKEN (RFC 9000 section 8.1.2), without a
// connection; a token that is not the server's NEW_TOKEN counts as none.
func TestInvalidRetryToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10msOnly, nil)
		store := NewTokenCache(4)
		store.Put("localhost", append([]byte{'r'}, bytes.Repeat([]byte{7}, 60)...))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		_, err := e.client.Dial(ctx, net.UDPAddrFromAddrPort(memServerAddr), clientTLS(), &Config{TokenStore: store})
		var te *TransportError
		if !errors.As(err, &te) || !te.Remote || te.ErrorCode != 0x0b {
			t.Fatalf("Dial with a forged Retry token: %v, want a remote INVALID_TOKEN", err)
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("refused after %v, want one round trip", d)
		}
		store.Put("localhost", append([]byte{'n'}, bytes.Repeat([]byte{7}, 60)...))
		c, accepted := e.dialMem(clientTLS(), &Config{TokenStore: store}, false)
		echoOnce(t, c, <-accepted, 100)
		_ = c.CloseWithError(0, "")
	})
}

// TestResumption0RTT: the second connection resumes the session of the
// first, and its request goes in 0-RTT packets with the ClientHello,
// before the handshake completes; the server takes it.
func TestResumption0RTT(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10msOnly, &Config{Allow0RTT: true})
		tc := resumingTLS()
		c, accepted := e.dialMem(tc, nil, false)
		s := <-accepted
		if c.ConnectionState().TLS.DidResume || c.ConnectionState().Used0RTT || s.ConnectionState().Used0RTT {
			t.Error("first connection resumed or used 0-RTT")
		}
		echoOnce(t, c, s, 100)
		waitTicket(t, tc)
		_ = c.CloseWithError(0, "")

		c, accepted = e.dialMem(tc, nil, true)
		defer c.CloseWithError(0, "")
		got := make(chan *Conn, 1)
		echoServer(accepted, got)
		st, err := c.OpenStream()
		if err != nil {
			t.Fatalf("OpenStream before the handshake: %v", err)
		}
		msg := []byte("GET /index.html\r\n")
		if _, err := st.Write(msg); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.HandshakeComplete():
			t.Fatal("the handshake completed before the early write returned")
		default:
		}
		_ = st.Close()
		back, err := io.ReadAll(st)
		if err != nil || !bytes.Equal(back, msg) {
			t.Fatalf("echo %q, %v", back, err)
		}
		s = <-got
		cs, ss := c.ConnectionState(), s.ConnectionState()
		if !cs.TLS.DidResume || !ss.TLS.DidResume || !cs.Used0RTT || !ss.Used0RTT {
			t.Errorf("resumed %v/%v, 0-RTT %v/%v; want all true", cs.TLS.DidResume, ss.TLS.DidResume, cs.Used0RTT, ss.Used0RTT)
		}
	})
}

// TestEarlyWithoutTicket: DialEarly without a session returns before the
// handshake; a stream opens once the handshake completed.
func TestEarlyWithoutTicket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10msOnly, &Config{Allow0RTT: true})
		start := time.Now()
		c, accepted := e.dialMem(resumingTLS(), nil, true)
		defer c.CloseWithError(0, "")
		if time.Since(start) != 0 {
			t.Errorf("DialEarly took %v", time.Since(start))
		}
		if _, err := c.OpenStream(); !errors.Is(err, ErrStreamLimit) {
			t.Errorf("OpenStream before the handshake without 0-RTT: %v", err)
		}
		st, err := c.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("stream opened after %v, want one round trip", d)
		}
		got := make(chan *Conn, 1)
		echoServer(accepted, got)
		_, _ = st.Write([]byte("x"))
		_ = st.Close()
		if b, err := io.ReadAll(st); err != nil || string(b) != "x" {
			t.Errorf("echo %q, %v", b, err)
		}
		if c.ConnectionState().Used0RTT {
			t.Error("Used0RTT without a session")
		}
	})
}

// TestRejected0RTT: a server that cannot open the ticket (another
// Listener, whose ticket keys differ) makes a full handshake; the data the
// client sent in 0-RTT is sent again and arrives all the same.
func TestRejected0RTT(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10msOnly, &Config{Allow0RTT: true})
		tc := resumingTLS()
		c, accepted := e.dialMem(tc, nil, false)
		echoOnce(t, c, <-accepted, 10)
		waitTicket(t, tc)
		_ = c.CloseWithError(0, "")
		if err := e.l.Close(); err != nil {
			t.Fatal(err)
		}
		l, err := e.server.Listen(serverTLS(), &Config{Allow0RTT: true})
		if err != nil {
			t.Fatal(err)
		}
		e.l = l

		c, accepted = e.dialMem(tc, nil, true)
		defer c.CloseWithError(0, "")
		got := make(chan *Conn, 1)
		echoServer(accepted, got)
		st, err := c.OpenStream()
		if err != nil {
			t.Fatalf("OpenStream in 0-RTT: %v", err)
		}
		msg := testkit.Payload(3000, 5)
		_, _ = st.Write(msg)
		_ = st.Close()
		back, err := io.ReadAll(st)
		if err != nil || !bytes.Equal(back, msg) {
			t.Fatalf("echo of %d bytes: %d, %v", len(msg), len(back), err)
		}
		cs := c.ConnectionState()
		if cs.TLS.DidResume || cs.Used0RTT || (<-got).ConnectionState().Used0RTT {
			t.Errorf("resumed %v, 0-RTT %v against a server without the ticket key", cs.TLS.DidResume, cs.Used0RTT)
		}
	})
}

// TestVersionsConfig: a server that accepts only version 1 answers a
// version 2 client with Version Negotiation, and the client starts again;
// a server that prefers version 2 moves a version 1 client that lists it
// (compatible negotiation, RFC 9368).
func TestVersionsConfig(t *testing.T) {
	for _, tc := range []struct {
		name           string
		client, server []Version
		want           Version
		handshake      time.Duration
	}{
		{"v2 client, v1 server", []Version{Version2, Version1}, []Version{Version1}, Version1, 40 * time.Millisecond},
		{"v1 client, v2 preferred", []Version{Version1, Version2}, []Version{Version2, Version1}, Version2, 20 * time.Millisecond},
		{"no common version", []Version{Version2}, []Version{Version1}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newMemEnv(t, link10msOnly, &Config{Versions: tc.server})
				if tc.want == 0 {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					_, err := e.client.Dial(ctx, net.UDPAddrFromAddrPort(memServerAddr), clientTLS(), &Config{Versions: tc.client})
					if err == nil || !strings.Contains(err.Error(), "version") {
						t.Fatalf("Dial without a common version: %v", err)
					}
					return
				}
				c, accepted := e.dialMem(clientTLS(), &Config{Versions: tc.client}, false)
				s := <-accepted
				if cv, sv := c.ConnectionState().Version, s.ConnectionState().Version; cv != tc.want || sv != tc.want {
					t.Errorf("versions %v (client) and %v (server), want %v", cv, sv, tc.want)
				}
				if hs := c.Stats().HandshakeDuration; hs != tc.handshake {
					t.Errorf("handshake %v, want %v", hs, tc.handshake)
				}
				echoOnce(t, c, s, 1000)
				_ = c.CloseWithError(0, "")
			})
		})
	}
}

// TestQlogFiles: with QlogDir, each end writes a JSON-SEQ qlog named after
// the original Destination Connection ID, the same on both ends after a
// Retry; a Tracer receives the qlog instead when set.
func TestQlogFiles(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10msOnly, &Config{QlogDir: dir, RequireAddressValidation: func(net.Addr) bool { return true }})
		c, accepted := e.dialMem(clientTLS(), &Config{QlogDir: dir}, false)
		echoOnce(t, c, <-accepted, 3000)
		_ = c.CloseWithError(0, "")
		var traced closeBuffer
		c, accepted = e.dialMem(clientTLS(), &Config{Tracer: func(ti TraceInfo) io.WriteCloser {
			if !ti.IsClient || len(ti.OriginalDestConnID) < 8 {
				t.Errorf("Tracer called with %+v", ti)
			}
			return &traced
		}}, false)
		echoOnce(t, c, <-accepted, 3000)
		_ = c.CloseWithError(0, "")
		e.server.Close()
		e.client.Close()
		if !traced.closed || !bytes.HasPrefix(traced.Bytes(), []byte("\x1e{")) || !bytes.Contains(traced.Bytes(), []byte(`"vantage_point":{"type":"client"`)) {
			t.Errorf("Tracer's qlog (closed %v): %.200q", traced.closed, traced.String())
		}
	})
	names, _ := filepath.Glob(filepath.Join(dir, "*.sqlog"))
	if len(names) != 3 {
		t.Fatalf("qlog files %v, want the client's and the server's of the first connection, the server's of the second", names)
	}
	clients, _ := filepath.Glob(filepath.Join(dir, "*_client.sqlog"))
	if len(clients) != 1 {
		t.Fatalf("client qlogs %v", clients)
	}
	odcid := strings.TrimSuffix(filepath.Base(clients[0]), "_client.sqlog")
	if _, err := os.Stat(filepath.Join(dir, odcid+"_server.sqlog")); err != nil || len(odcid) != 16 {
		t.Fatalf("no server qlog for the client's %s (%v): %v", odcid, err, names)
	}
	for _, role := range []string{"client", "server"} {
		b, err := os.ReadFile(filepath.Join(dir, odcid+"_"+role+".sqlog"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"\x1e{\"qlog_version\"", `"qlog_format":"JSON-SEQ"`, `"ODCID":"` + odcid + `"`, `transport:packet_sent`, `transport:packet_received`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s qlog lacks %q", role, want)
			}
		}
	}
}

// closeBuffer is a qlog destination in memory.
type closeBuffer struct {
	bytes.Buffer
	closed bool
}

func (b *closeBuffer) Close() error { b.closed = true; return nil }

// TestKeyUpdateInterval: with a key update interval, a transfer changes
// keys many times and arrives whole.
func TestKeyUpdateInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{KeyUpdateInterval: 100})
		c, s := e.connect(&Config{KeyUpdateInterval: 100})
		echoOnce(t, c, s, 1<<20)
		if cu, su := c.Stats().KeyUpdates, s.Stats().KeyUpdates; cu < 3 || su < 3 {
			t.Errorf("key updates: client %d, server %d; want several", cu, su)
		}
		_ = c.CloseWithError(0, "")
	})
}

// fakeInitial is a datagram that PeekInitial accepts but whose packet does
// not decrypt: what a flood with spoofed source addresses looks like.
func fakeInitial(t *testing.T, dcid byte) []byte {
	t.Helper()
	h := wire.LongHeader{
		Type: wire.PacketTypeInitial, Version: wire.Version1,
		DstConnID: mustConnID(t, dcid, 1, 2, 3, 4, 5, 6, 7), SrcConnID: mustConnID(t, 9, 9, 9, 9),
		Length: 1000, LengthLen: 2, PacketNumberLen: 2,
	}
	hdr, err := wire.AppendLongHeader(nil, &h)
	if err != nil {
		t.Fatal(err)
	}
	h.Length = uint64(1200 - len(hdr) + h.PacketNumberLen)
	b, err := wire.AppendLongHeader(nil, &h)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, make([]byte, 1200-len(b))...)
}

func mustConnID(t *testing.T, b ...byte) wire.ConnectionID {
	t.Helper()
	id, err := wire.NewConnectionID(b)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestUnvalidatedHandshakesBounded: once DefaultMaxUnvalidatedHandshakes
// handshakes with unvalidated clients are in progress, further clients
// get a Retry, which costs the server no state; a real client still
// connects, with the Retry's round trip. The Initials come from one
// address, whose own bound is lifted here.
func TestUnvalidatedHandshakesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const extra = 3
		e := newMemEnv(t, link10msOnly, &Config{MaxHandshakesPerIP: 1000})
		if retries := sendFakeInitials(t, e, DefaultMaxUnvalidatedHandshakes+extra); retries != extra {
			t.Errorf("%d Retry packets for %d Initials beyond the bound, want one each", retries, extra)
		}
		c, accepted := e.dialMem(clientTLS(), nil, false)
		if hs := c.Stats().HandshakeDuration; hs != 40*time.Millisecond {
			t.Errorf("handshake under load took %v, want two round trips", hs)
		}
		echoOnce(t, c, <-accepted, 100)
		_ = c.CloseWithError(0, "")
	})
}

// TestUnvalidatedHandshakesLifted: with MaxUnvalidatedHandshakes above
// the handshakes in progress, no client gets a Retry, and a real client's
// handshake takes one round trip.
func TestUnvalidatedHandshakesLifted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10msOnly, &Config{MaxHandshakesPerIP: 1000, MaxUnvalidatedHandshakes: 1000})
		if retries := sendFakeInitials(t, e, DefaultMaxUnvalidatedHandshakes+3); retries != 0 {
			t.Errorf("%d Retry packets under a lifted bound, want none", retries)
		}
		c, accepted := e.dialMem(clientTLS(), nil, false)
		if hs := c.Stats().HandshakeDuration; hs != 20*time.Millisecond {
			t.Errorf("handshake took %v, want one round trip", hs)
		}
		echoOnce(t, c, <-accepted, 100)
		_ = c.CloseWithError(0, "")
	})
}

// sendFakeInitials sends n first Initials of n clients from one address
// to the server and counts the Retry packets that answer them.
func sendFakeInitials(t *testing.T, e *memEnv, n int) (retries int) {
	raw, err := e.n.Listen(netip.AddrPortFrom(memClientAddr.Addr(), 9999))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for i := range n {
		if _, err := raw.WriteToUDPAddrPort(fakeInitial(t, byte(i)), memServerAddr); err != nil {
			t.Fatal(err)
		}
	}
	buf := make([]byte, 1500)
	for {
		_ = raw.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, _, err := raw.ReadFromUDPAddrPort(buf)
		if err != nil {
			return retries
		}
		if h, _, err := wire.ParseLongHeader(buf[:n]); err == nil && h.Type == wire.PacketTypeRetry {
			retries++
		}
	}
}

// TestResumeRTT: over a 600 ms round trip, a connection that resumes a
// session with ResumeRTT starts from the round trip its ticket remembers,
// not from the default initial RTT.
func TestResumeRTT(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, netsim.LinkConfig{Delay: 300 * time.Millisecond}, nil)
		tc := resumingTLS()
		c, accepted := e.dialMem(tc, nil, false)
		echoOnce(t, c, <-accepted, 100)
		waitTicket(t, tc)
		srtt := c.Stats().SmoothedRTT
		if srtt < 600*time.Millisecond {
			t.Fatalf("smoothed RTT %v over a 600 ms round trip", srtt)
		}
		_ = c.CloseWithError(0, "")
		for _, resume := range []bool{false, true} {
			c, accepted := e.dialMem(tc, &Config{ResumeRTT: resume}, true)
			want := 333 * time.Millisecond
			if resume {
				want = srtt
			}
			if got := c.Stats().SmoothedRTT; got != want {
				t.Errorf("ResumeRTT %v: first RTT estimate %v, want %v", resume, got, want)
			}
			echoOnce(t, c, <-accepted, 100)
			waitTicket(t, tc)
			_ = c.CloseWithError(0, "")
		}
	})
}

// TestQlogEnv: without QlogDir or Tracer, the QLOGDIR environment
// variable names the qlog directory.
func TestQlogEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("QLOGDIR", dir)
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10msOnly, nil)
		c, s := e.connect(nil)
		echoOnce(t, c, s, 100)
		_ = c.CloseWithError(0, "")
	})
	for _, role := range []string{"client", "server"} {
		if names, _ := filepath.Glob(filepath.Join(dir, "*_"+role+".sqlog")); len(names) != 1 {
			t.Errorf("%s qlogs in $QLOGDIR: %v", role, names)
		}
	}
}
