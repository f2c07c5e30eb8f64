package quic

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"
)

// TestLoopbackEcho is a first check over a real socket: one stream each
// way.
func TestLoopbackEcho(t *testing.T) {
	checkGoroutines(t)
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
	msg := payload(100000, 1)
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
