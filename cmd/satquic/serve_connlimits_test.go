package main

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// TestServeMaxConnsPerIP: with --max-conns-per-ip 2, a third connection
// from the loopback address is refused, whatever its port, until one of
// the first two closes.
func TestServeMaxConnsPerIP(t *testing.T) {
	checkNoGoroutines(t)
	addr, _ := startServe(t, t.TempDir(), "--max-conns-per-ip", "2")
	dial := func() (*quic.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return quic.DialAddr(ctx, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{hq.ALPN}}, nil)
	}
	var held []*quic.Conn
	for range 2 {
		c, err := dial()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	_, err := dial()
	var te *quic.TransportError
	if !errors.As(err, &te) || !te.Remote || te.ErrorCode.String() != "CONNECTION_REFUSED" {
		t.Errorf("a third connection: %v, want CONNECTION_REFUSED", err)
	}
	_ = held[0].CloseWithError(0, "")
	// The server frees the place once the close arrived.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := dial()
		if err == nil {
			_ = c.CloseWithError(0, "")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a close: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = held[1].CloseWithError(0, "")
}
