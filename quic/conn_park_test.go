package quic

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"weak"

	"github.com/satquic/satquic/internal/testkit"
)

// TestIdleConnParks checks, in virtual time, that both ends of an idle
// connection give up their goroutines, that a stream started by either
// end wakes the other, and that a Transport closing ends its parked
// connections (the bubble fails the test if a goroutine is left blocked).
func TestIdleConnParks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		client, server := e.connect(nil)
		waitParked(t, "after the handshake", client, server)

		parkEcho(t, client, server, []byte("from the client"))
		waitParked(t, "after the client's stream", client, server)
		parkEcho(t, server, client, []byte("from the server"))
		waitParked(t, "after the server's stream", client, server)
	})
}

// waitParked lets the bubble's virtual time run past the delayed ACKs and
// checks that every connection's goroutine parked.
func waitParked(t *testing.T, when string, conns ...*Conn) {
	t.Helper()
	time.Sleep(time.Second)
	synctest.Wait()
	for _, c := range conns {
		if s := c.loop.Load(); s != loopParked {
			t.Errorf("%s: the %s's loop is in state %d, not parked", when, side(c), s)
		}
	}
}

func side(c *Conn) string {
	if c.isClient {
		return "client"
	}
	return "server"
}

// parkEcho opens a stream from a to b with msg and reads it back.
func parkEcho(t *testing.T, a, b *Conn, msg []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- parkEchoServe(ctx, b) }()
	if err := parkEchoRound(ctx, a, msg); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// parkEchoServe accepts one stream and echoes it.
func parkEchoServe(ctx context.Context, c *Conn) error {
	s, err := c.AcceptStream(ctx)
	if err != nil {
		return fmt.Errorf("%s AcceptStream: %w", side(c), err)
	}
	if _, err := io.Copy(s, s); err != nil {
		return fmt.Errorf("%s echo: %w", side(c), err)
	}
	return s.Close()
}

// parkEchoRound sends msg on a new stream and checks that it comes back.
func parkEchoRound(ctx context.Context, c *Conn, msg []byte) error {
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return fmt.Errorf("%s OpenStreamSync: %w", side(c), err)
	}
	if _, err := s.Write(msg); err != nil {
		return fmt.Errorf("%s write: %w", side(c), err)
	}
	if err := s.Close(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = s.SetReadDeadline(dl)
	}
	got, err := io.ReadAll(s)
	if err != nil {
		return fmt.Errorf("%s read after %d bytes: %w", side(c), len(got), err)
	}
	if !bytes.Equal(got, msg) {
		return fmt.Errorf("%s: %d bytes came back as %d different ones", side(c), len(msg), len(got))
	}
	return nil
}

// TestParkEveryWait runs both ends of real loopback connections with
// goroutines that park at every wait, however short, so that every
// datagram, application call and timer restarts a parked goroutine or
// races with one parking: a lost wake-up stalls a transfer (run it with
// -race). A bulk transfer each way, then rounds of concurrent echoes.
func TestParkEveryWait(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server, client := parkingTransport(t), parkingTransport(t)
	l, err := server.Listen(serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			t.Errorf("Accept: %v", err)
		}
		accepted <- c
	}()
	cc, err := client.Dial(ctx, server.LocalAddr(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := <-accepted
	if sc == nil {
		return
	}

	const bulk = 8 << 20
	parkEcho(t, cc, sc, testkit.Payload(bulk, 1))
	parkEcho(t, sc, cc, testkit.Payload(bulk, 2))

	const rounds, streams = 200, 4
	for r := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, 4*streams)
		for i := range streams {
			a, b := cc, sc
			if i%2 == 1 {
				a, b = sc, cc
			}
			msg := testkit.Payload(1+(r*streams+i)%3000, uint64(r*streams+i))
			wg.Go(func() { errs <- parkEchoServe(ctx, b) })
			wg.Go(func() { errs <- parkEchoRound(ctx, a, msg) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", r, err)
			}
		}
	}
	if err := client.Close(); err != nil {
		t.Errorf("client Close: %v", err)
	}
	if err := server.Close(); err != nil {
		t.Errorf("server Close: %v", err)
	}
}

// parkingTransport is a loopback Transport whose connections park at
// every wait.
func parkingTransport(t *testing.T) *Transport {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	return &Transport{Conn: pc, parkAfterOverride: time.Nanosecond}
}

// TestEndedConnIsCollected checks that nothing keeps an ended connection
// alive: neither its Transport nor its timer, which, stopped, may stay in
// the runtime's timer heap until its time would have come (a server
// holding a thousand silent handshakes kept as many ended clients so).
func TestEndedConnIsCollected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		client, server := e.connect(nil)
		parkEcho(t, client, server, []byte("once"))
		weakClient, weakServer := weak.Make(client), weak.Make(server)
		if err := client.CloseWithError(0, ""); err != nil {
			t.Fatal(err)
		}
		// The server ends after its draining period (RFC 9000 section
		// 10.2.2), a few probe timeouts.
		<-server.Context().Done()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		for _, c := range []*Conn{client, server} {
			if c.timerTarget.c.Load() != nil {
				t.Errorf("the ended %s's timer still leads to it", side(c))
			}
		}
		client, server = nil, nil
		runtime.GC()
		runtime.GC()
		if weakClient.Value() != nil || weakServer.Value() != nil {
			t.Fatalf("ended connections still referenced: client %v, server %v", weakClient.Value() != nil, weakServer.Value() != nil)
		}
	})
}
