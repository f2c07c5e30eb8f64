package quic

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	"github.com/satquic/satquic/internal/testkit"
)

// Migration against quic-go, both ways, over loopback: quic-go's server
// follows a satquic client that moves to a new socket, and a satquic
// server follows a quic-go client that probes a new path (Conn.AddPath)
// and switches to it.

func TestMigrateToQuicGoServer(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ln, err := quicgo.ListenAddr("127.0.0.1:0", serverTLS(), &quicgo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	body := testkit.Payload(8<<20, 11)
	serverConn := make(chan *quicgo.Conn, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		serverConn <- c
		s, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, s)
		_, _ = s.Write(body)
		_ = s.Close()
	}()
	defer func() { <-done }()
	c, err := DialAddr(ctx, ln.Addr().String(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s := requestDownload(t, c)
	got := make([]byte, 1<<20)
	if _, err := io.ReadFull(s, got); err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if err := c.Migrate(ctx, pc); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	rest, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if got = append(got, rest...); !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, not the %d-byte body", len(got), len(body))
	}
	sc := <-serverConn
	defer sc.CloseWithError(0, "")
	if sc.RemoteAddr().String() != pc.LocalAddr().String() {
		t.Errorf("quic-go sends to %v, not %v", sc.RemoteAddr(), pc.LocalAddr())
	}
	t.Logf("client %+v", c.Stats().Migration)
}

func TestQuicGoMigratesToServer(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	body := testkit.Payload(8<<20, 13)
	conns := make(chan *Conn, 1)
	go serveDownload(ctx, l, body, conns)
	// quic-go's client migrates only with connection IDs of its own:
	// with zero-length ones, which it uses by default, nothing routes
	// the packets of a new path to the connection.
	first, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr0 := &quicgo.Transport{Conn: first, ConnectionIDLength: 8}
	defer tr0.Close()
	c, err := tr0.Dial(ctx, l.Addr(), clientTLS(), &quicgo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("GET")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 1<<20)
	if _, err := io.ReadFull(s, got); err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quicgo.Transport{Conn: pc, ConnectionIDLength: 8}
	defer tr.Close()
	path, err := c.AddPath(tr)
	if err != nil {
		t.Fatalf("AddPath: %v", err)
	}
	if err := path.Probe(ctx); err != nil {
		t.Fatalf("quic-go's probe of the new path: %v", err)
	}
	if err := path.Switch(); err != nil {
		t.Fatalf("Switch: %v", err)
	}
	rest, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if got = append(got, rest...); !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, not the %d-byte body", len(got), len(body))
	}
	sc := <-conns
	if sc.RemoteAddr().String() != pc.LocalAddr().String() {
		t.Errorf("the server sends to %v, not quic-go's new socket %v", sc.RemoteAddr(), pc.LocalAddr())
	}
	ss := sc.Stats().Migration
	if ss.PeerAddressChanges != 1 || ss.ValidationsSucceeded != 1 || ss.ResponsesSent == 0 {
		t.Errorf("server %+v: want the probe answered, one move, validated", ss)
	}
	t.Logf("server %+v", ss)
}
