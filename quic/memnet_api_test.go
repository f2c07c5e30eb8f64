package quic

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
)

func TestHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, netsim.LinkConfig{Delay: 10 * time.Millisecond}, nil)
		start := time.Now()
		c, s := e.connect(nil)
		// The client completes after one round trip, the server (and
		// Accept) half a round trip later, when the client's Finished
		// arrives: the link is infinitely fast and virtual time does not
		// count CPU.
		if d := time.Since(start); d != 30*time.Millisecond {
			t.Errorf("Dial and Accept took %v, want 30ms", d)
		}
		if hs := c.Stats().HandshakeDuration; hs != 20*time.Millisecond {
			t.Errorf("client HandshakeDuration %v, want 20ms", hs)
		}
		if hs := s.Stats().HandshakeDuration; hs != 20*time.Millisecond {
			t.Errorf("server HandshakeDuration %v, want 20ms", hs)
		}
		for _, side := range []*Conn{c, s} {
			st := side.ConnectionState()
			if st.TLS.NegotiatedProtocol != testALPN || !st.TLS.HandshakeComplete || st.TLS.Version != tls.VersionTLS13 {
				t.Errorf("TLS state: ALPN %q, complete %v, version %x", st.TLS.NegotiatedProtocol, st.TLS.HandshakeComplete, st.TLS.Version)
			}
			if st.Version != Version1 {
				t.Errorf("QUIC version %v", st.Version)
			}
		}
		if got := len(c.ConnectionState().TLS.PeerCertificates); got != 1 {
			t.Errorf("client sees %d peer certificates", got)
		}
		if c.RemoteAddr().String() != memServerAddr.String() || s.RemoteAddr().String() != memClientAddr.String() {
			t.Errorf("addresses: client's remote %v, server's remote %v", c.RemoteAddr(), s.RemoteAddr())
		}
		if c.RemoteAddrPort() != memServerAddr || s.RemoteAddrPort() != memClientAddr {
			t.Errorf("addresses as values: client's remote %v, server's remote %v", c.RemoteAddrPort(), s.RemoteAddrPort())
		}
		if c.LocalAddr().String() != memClientAddr.String() {
			t.Errorf("client's local address %v", c.LocalAddr())
		}
		if st := c.Stats(); st.MinRTT != 20*time.Millisecond {
			t.Errorf("client MinRTT %v", st.MinRTT)
		}
		_ = c.CloseWithError(0, "")
	})
}

func TestVersion2(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		c, s := e.connect(&Config{Version: Version2})
		if c.ConnectionState().Version != Version2 || s.ConnectionState().Version != Version2 {
			t.Errorf("versions %v and %v", c.ConnectionState().Version, s.ConnectionState().Version)
		}
		echoOnce(t, c, s, 10000)
	})
}

// echoOnce sends n bytes from c on a new stream, which s echoes back.
func echoOnce(t *testing.T, c, s *Conn, n int) {
	t.Helper()
	ctx := context.Background()
	go func() {
		st, err := s.AcceptStream(ctx)
		if err != nil {
			return
		}
		_, _ = io.Copy(st, st)
		_ = st.Close()
	}()
	st, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	msg := testkit.Payload(n, 3)
	go func() {
		_, _ = st.Write(msg)
		_ = st.Close()
	}()
	got, err := io.ReadAll(st)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo: %d of %d bytes, err %v", len(got), len(msg), err)
	}
}

func TestStreamsBothWays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		c, s := e.connect(nil)
		ctx := context.Background()
		up, down := testkit.Payload(1<<20, 1), testkit.Payload(3<<20, 2)
		var wg sync.WaitGroup
		// Server: answers a bidirectional stream and pushes on a
		// unidirectional one of its own.
		wg.Go(func() {
			st, err := s.AcceptStream(ctx)
			if err != nil {
				t.Errorf("AcceptStream: %v", err)
				return
			}
			got, err := io.ReadAll(st)
			if err != nil || !bytes.Equal(got, up) {
				t.Errorf("server read %d bytes, err %v", len(got), err)
			}
			if _, err := st.Write(down); err != nil {
				t.Errorf("server Write: %v", err)
			}
			_ = st.Close()
			u, err := s.OpenUniStreamSync(ctx)
			if err != nil {
				t.Errorf("OpenUniStreamSync: %v", err)
				return
			}
			_, _ = u.Write([]byte("push"))
			_ = u.Close()
		})
		st, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.StreamID() != 0 {
			t.Errorf("first client stream has ID %d", st.StreamID())
		}
		if _, err := st.Write(up); err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Write([]byte("x")); err != ErrWriteClosed {
			t.Errorf("Write after Close: %v", err)
		}
		got, err := io.ReadAll(st)
		if err != nil || !bytes.Equal(got, down) {
			t.Fatalf("client read %d bytes, err %v", len(got), err)
		}
		if n, err := st.Read(make([]byte, 10)); n != 0 || err != io.EOF {
			t.Errorf("Read after EOF: %d, %v", n, err)
		}
		u, err := c.AcceptUniStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if u.StreamID() != 3 {
			t.Errorf("server's first unidirectional stream has ID %d", u.StreamID())
		}
		if b, err := io.ReadAll(u); err != nil || string(b) != "push" {
			t.Errorf("unidirectional stream: %q, %v", b, err)
		}
		wg.Wait()
		// 4 MiB over 100 Mbit/s takes at least 0.34 s; slow start
		// adds a few round trips, not seconds.
		if el := time.Since(time.Unix(946684800, 0)); el > 2*time.Second {
			t.Errorf("transfers took %v of virtual time", el)
		}
		_ = c.CloseWithError(0, "")
	})
}

func TestConcurrentStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxIncomingStreams: 8})
		c, s := e.connect(nil)
		ctx := context.Background()
		const streams, size = 32, 100 << 10
		// The server echoes every stream, each in its own goroutine.
		go func() {
			for {
				st, err := s.AcceptStream(ctx)
				if err != nil {
					return
				}
				go func() {
					_, _ = io.Copy(st, st)
					_ = st.Close()
				}()
			}
		}()
		var wg sync.WaitGroup
		for i := range streams {
			wg.Go(func() {
				// 32 streams against a limit of 8: OpenStreamSync
				// waits for MAX_STREAMS.
				st, err := c.OpenStreamSync(ctx)
				if err != nil {
					t.Errorf("stream %d: %v", i, err)
					return
				}
				msg := testkit.Payload(size, uint64(i))
				go func() {
					_, _ = st.Write(msg)
					_ = st.Close()
				}()
				got, err := io.ReadAll(st)
				if err != nil || !bytes.Equal(got, msg) {
					t.Errorf("stream %d: %d of %d bytes, err %v", st.StreamID(), len(got), size, err)
				}
			})
		}
		wg.Wait()
		if _, err := c.OpenStream(); err != nil && err != ErrStreamLimit {
			t.Errorf("OpenStream: %v", err)
		}
		_ = c.CloseWithError(0, "")
	})
}

func TestOpenStreamLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxIncomingStreams: 2, MaxIncomingUniStreams: 1})
		c, _ := e.connect(nil)
		for i := range 2 {
			if _, err := c.OpenStream(); err != nil {
				t.Fatalf("stream %d: %v", i, err)
			}
		}
		if _, err := c.OpenStream(); err != ErrStreamLimit {
			t.Errorf("third stream: %v, want ErrStreamLimit", err)
		}
		if _, err := c.OpenUniStream(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := c.OpenUniStreamSync(ctx); err != context.DeadlineExceeded {
			t.Errorf("OpenUniStreamSync at the limit: %v", err)
		}
		_ = c.CloseWithError(0, "")
	})
}

// TestManyConnections runs connections to one server from one client
// Transport, and one the other way between the same two sockets.
func TestManyConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		ctx := context.Background()
		go func() {
			for {
				c, err := e.l.Accept(ctx)
				if err != nil {
					return
				}
				go func() {
					for {
						st, err := c.AcceptStream(ctx)
						if err != nil {
							return
						}
						_, _ = io.Copy(st, st)
						_ = st.Close()
					}
				}()
			}
		}()
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Go(func() {
				c, err := e.client.Dial(ctx, e.server.LocalAddr(), clientTLS(), nil)
				if err != nil {
					t.Errorf("conn %d: %v", i, err)
					return
				}
				defer c.CloseWithError(0, "")
				st, _ := c.OpenStream()
				msg := []byte(fmt.Sprintf("connection %d", i))
				_, _ = st.Write(msg)
				_ = st.Close()
				if got, err := io.ReadAll(st); err != nil || !bytes.Equal(got, msg) {
					t.Errorf("conn %d: %q, %v", i, got, err)
				}
			})
		}
		wg.Wait()
		// One socket in both roles: the client's Transport listens too,
		// and the server's Transport dials it.
		l2, err := e.client.Listen(serverTLS(), nil)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := l2.Accept(ctx)
			if err != nil {
				return
			}
			st, err := c.AcceptStream(ctx)
			if err != nil {
				return
			}
			_, _ = io.Copy(st, st)
			_ = st.Close()
		}()
		self, err := e.server.Dial(ctx, e.client.LocalAddr(), clientTLS(), nil)
		if err != nil {
			t.Fatalf("dialing back: %v", err)
		}
		st, _ := self.OpenStream()
		_, _ = st.Write([]byte("back"))
		_ = st.Close()
		if got, err := io.ReadAll(st); err != nil || string(got) != "back" {
			t.Errorf("back: %q, %v", got, err)
		}
		_ = self.CloseWithError(0, "")
		_ = l2.Close()
	})
}
