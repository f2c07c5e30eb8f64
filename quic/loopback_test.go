package quic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
)

// TestLoopbackEcho is a first check over a real socket: one stream each
// way.
func TestLoopbackEcho(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		_, _ = io.Copy(s, s)
		_ = s.Close()
	}()
	c, err := DialAddr(ctx, l.Addr().String(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	msg := testkit.Payload(100000, 1)
	go func() {
		_, _ = s.Write(msg)
		_ = s.Close()
	}()
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo of %d bytes came back as %d different bytes", len(msg), len(got))
	}
	if p := c.ConnectionState().TLS.NegotiatedProtocol; p != testALPN {
		t.Errorf("ALPN %q", p)
	}
	t.Logf("stats %+v", c.Stats())
}

// TestTransportCloseJoins closes a Transport over a real socket while its
// connections have calls waiting: every call returns, and every goroutine
// of both Transports ends.
func TestTransportCloseJoins(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	spc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer spc.Close()
	cpc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer cpc.Close()
	server, client := &Transport{Conn: spc}, &Transport{Conn: cpc}
	l, err := server.Listen(serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, err := l.Accept(ctx); err != nil {
				return
			}
		}
	}()
	errs := make(chan error, 10)
	for range 5 {
		c, err := client.Dial(ctx, spc.LocalAddr(), clientTLS(), nil)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := c.OpenStream()
		go func() {
			_, err := s.Read(make([]byte, 1))
			errs <- err
		}()
		go func() {
			_, err := c.AcceptStream(ctx)
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond)
	if err := client.Close(); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := <-errs; !errors.Is(err, ErrTransportClosed) {
			t.Errorf("waiting call returned %v, want ErrTransportClosed", err)
		}
	}
	if err := server.Close(); err != nil {
		t.Fatal(err)
	}
	// The sockets were the caller's: they are still open, and usable.
	if _, err := cpc.WriteTo([]byte("x"), spc.LocalAddr()); err != nil {
		t.Errorf("socket after Transport.Close: %v", err)
	}
	_ = spc.SetReadDeadline(time.Now().Add(time.Second))
	if _, _, err := spc.ReadFrom(make([]byte, 10)); err != nil {
		t.Errorf("reading the socket after Transport.Close: %v", err)
	}
}
