//go:build linux

package quic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"golang.org/x/net/bpf"
)

// multiEchoServer accepts connections on l and echoes every stream until ctx
// ends.
func multiEchoServer(ctx context.Context, l *Listener) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		go func() {
			for {
				s, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				go func() {
					_, _ = io.Copy(s, s)
					_ = s.Close()
				}()
			}
		}()
	}
}

// multiEchoClient opens a connection from its own client socket, echoes a few
// streams and closes.
func multiEchoClient(ctx context.Context, addr string, streams, size int) error {
	c, err := DialAddr(ctx, addr, clientTLS(), nil)
	if err != nil {
		return err
	}
	defer c.CloseWithError(0, "")
	return echoStreams(ctx, c, streams, size)
}

// echoStreams sends streams payloads of size bytes over c, one stream
// each, and checks their echoes.
func echoStreams(_ context.Context, c *Conn, streams, size int) error {
	for i := range streams {
		s, err := c.OpenStream()
		if err != nil {
			return err
		}
		msg := testkit.Payload(size, uint64(i))
		go func() {
			_, _ = s.Write(msg)
			_ = s.Close()
		}()
		got, err := io.ReadAll(s)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, msg) {
			return fmt.Errorf("stream %d: %d bytes came back for %d", i, len(got), len(msg))
		}
	}
	return nil
}

// serveMulti starts an echo server on a Transport of n sockets.
func serveMulti(t *testing.T, ctx context.Context, n int, lb *QUICLB, conf *Config) (*Transport, string) {
	t.Helper()
	tr, err := ListenMulti("127.0.0.1:0", n)
	if err != nil {
		t.Fatal(err)
	}
	tr.LoadBalancer = lb
	l, err := tr.Listen(serverTLS(), conf)
	if err != nil {
		_ = tr.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	go multiEchoServer(ctx, l)
	return tr, l.Addr().String()
}

// runClients opens conns connections at once and fails t on any error.
func runClients(t *testing.T, ctx context.Context, addr string, conns int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		wg.Go(func() { errs <- multiEchoClient(ctx, addr, 3, 20000) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// runClientsOnePort opens conns connections from one client socket.
func runClientsOnePort(t *testing.T, ctx context.Context, addr string, conns int) {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	client := &Transport{Conn: pc}
	defer func() {
		_ = client.Close()
		_ = pc.Close()
	}()
	to, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		wg.Go(func() {
			c, err := client.Dial(ctx, to, clientTLS(), nil)
			if err != nil {
				errs <- err
				return
			}
			defer c.CloseWithError(0, "")
			errs <- echoStreams(ctx, c, 2, 10000)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkOwnership checks that every datagram for a connection arrived on
// the socket that owns it, and that both sockets own connections.
func checkOwnership(t *testing.T, tr *Transport, conns int) {
	t.Helper()
	stats := tr.SocketStats()
	t.Logf("sockets: %+v", stats)
	if len(stats) != 2 {
		t.Fatalf("%d sockets, want 2 (fallback: %v)", len(stats), tr.SocketFallback())
	}
	var started uint64
	for i, s := range stats {
		if s.Foreign != 0 {
			t.Errorf("socket %d received %d datagrams of connections another socket owns", i, s.Foreign)
		}
		// Each of 24 connections picks a socket by a random octet of
		// its client's first connection ID: one socket is left
		// without a connection once in 2^23 runs.
		if s.Connections == 0 || s.Datagrams == 0 {
			t.Errorf("socket %d owns no connection: %+v", i, s)
		}
		started += s.Connections
	}
	if started != uint64(conns) {
		t.Errorf("%d connections started, want %d", started, conns)
	}
}

// TestMultiSocketSteering opens many connections to a server with two
// steered sockets: each connection's datagrams all reach the socket that
// owns it, with random connection IDs, with QUIC-LB ones (whose socket
// octet, after a 12-octet server ID, lies beyond a client's 8-octet first
// ID), with a Retry before every connection, and from one client port.
func TestMultiSocketSteering(t *testing.T) {
	testkit.CheckGoroutines(t)
	const conns = 24
	cases := []struct {
		name    string
		lb      *QUICLB
		conf    *Config
		onePort bool
	}{
		{"random IDs", nil, nil, false},
		{"QUIC-LB IDs", &QUICLB{ConfigID: 2, ServerID: []byte{0xde, 0xad}, NonceLength: 6, EncodeLength: true}, nil, false},
		{"Retry", nil, &Config{RequireAddressValidation: func(net.Addr) bool { return true }}, false},
		{"one client port", nil, nil, true},
		{"one client port, QUIC-LB IDs", &QUICLB{ServerID: make([]byte, 12)}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			tr, addr := serveMulti(t, ctx, 2, c.lb, c.conf)
			if tr.Sockets() != 2 {
				t.Skipf("no steered socket group here: %v", tr.SocketFallback())
			}
			if c.onePort {
				runClientsOnePort(t, ctx, addr, conns)
			} else {
				runClients(t, ctx, addr, conns)
			}
			checkOwnership(t, tr, conns)
		})
	}
}

// TestMultiSocketStatelessAnswers checks what a steered group answers
// without state: a Stateless Reset for a short-header packet of no
// connection, and Version Negotiation for an unknown version.
func TestMultiSocketStatelessAnswers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, addr := serveMulti(t, ctx, 2, nil, nil)
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	to, _ := net.ResolveUDPAddr("udp4", addr)
	ask := func(pkt []byte) []byte {
		t.Helper()
		if _, err := pc.WriteTo(pkt, to); err != nil {
			t.Fatal(err)
		}
		_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 2048)
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("no answer to %x...: %v", pkt[:8], err)
		}
		return buf[:n]
	}
	for octet := range 4 {
		short := testkit.Payload(60, uint64(octet))
		short[0], short[1] = 0x40, byte(octet) // socket octet: both sockets
		reset := ask(short)
		if reset[0]&0xc0 != 0x40 || len(reset) < 21 || len(reset) >= len(short) {
			t.Errorf("answer of %d bytes, first %#x: not a Stateless Reset", len(reset), reset[0])
		}
	}
	long := make([]byte, 1200)
	copy(long, []byte{0xc0, 0x1a, 0x2a, 0x3a, 0x4a, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0})
	vn := ask(long)
	if len(vn) < 7 || vn[0]&0x80 == 0 || !bytes.Equal(vn[1:5], []byte{0, 0, 0, 0}) {
		t.Errorf("answer %x: not a Version Negotiation packet", vn)
	}
}

// TestMultiSocketFallback makes attaching the steering program fail, as on
// a kernel older than 4.5: the Transport serves from one socket, says why,
// and connections work.
func TestMultiSocketFallback(t *testing.T) {
	testkit.CheckGoroutines(t)
	old := attachSteering
	attachSteering = func(*net.UDPConn, []bpf.RawInstruction) error {
		return errors.New("SO_ATTACH_REUSEPORT_CBPF: protocol not available")
	}
	defer func() { attachSteering = old }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr, addr := serveMulti(t, ctx, 2, nil, nil)
	if tr.Sockets() != 1 {
		t.Fatalf("%d sockets after a failed attach", tr.Sockets())
	}
	if tr.SocketFallback() == nil {
		t.Fatal("no fallback reason")
	}
	runClients(t, ctx, addr, 4)
	if s := tr.SocketStats(); len(s) != 1 || s[0].Connections != 4 {
		t.Fatalf("socket stats %+v", s)
	}
}
