package main

import (
	"context"
	"crypto/tls"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// TestServeMaxConnsPerIP: with --max-conns-per-ip 2, a third connection
// from the loopback address is refused, whatever its port, until one of
// the first two closes; serve's last lines count the refusals by limit.
func TestServeMaxConnsPerIP(t *testing.T) {
	checkNoGoroutines(t)
	h := startServeHandle(t, t.TempDir(), "--max-conns-per-ip", "2")
	addr := h.addr
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
	if err := h.stop(t); err != nil {
		t.Fatal(err)
	}
	// Each refused attempt is counted once per Initial that reached the
	// server.
	line := regexp.MustCompile(`quic limits: (\d+) clients refused \(0 at --max-handshakes, 0 at --max-handshakes-per-ip, ` +
		`0 at --max-conns, (\d+) at --max-conns-per-ip, 0 waiting to be accepted\), 0 connections evicted`)
	m := line.FindStringSubmatch(h.stdout.String())
	if m == nil || m[1] != m[2] || m[1] == "0" {
		t.Errorf("serve's counters of refusals:\n%s", h.stdout.String())
	}
}
