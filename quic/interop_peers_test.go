package quic

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
)

// The two directions of an interop test through the emulator: a satquic
// client with a quic-go server, and a quic-go client with a satquic
// server. A case is written once against hqClient and runs both ways.

// hqClient is one client connection of either stack.
type hqClient interface {
	// open opens a bidirectional stream whose reads and writes fail at
	// ctx's deadline: a stalled transfer fails the test, with the
	// counters, rather than hanging it.
	open(ctx context.Context) (io.ReadWriteCloser, error)
	// close closes the connection (application error 0).
	close()
	// String summarizes the connection's counters, where the stack
	// exposes them, for the log of a failure.
	String() string
}

// interopDirection names who dials whom, and starts each side.
type interopDirection struct {
	name string
	// serve starts a server answering hq requests on every connection
	// until the test ends; its counters go to the log then.
	serve func(t *testing.T, ctx context.Context, wait time.Duration) net.Addr
	// dial opens a client connection to addr (the relay) and waits for
	// its handshake.
	dial func(ctx context.Context, addr string, wait time.Duration) (hqClient, error)
}

// Both serve and dial take wait, how long that end waits for the other
// (0: the stack's defaults): its handshake and idle timeouts. satquic ends
// a handshake at its HandshakeTimeout (default 20 s) or its idle timeout
// (default 30 s after its first packet when nothing came back), so it gets
// wait for both; quic-go ends one after its HandshakeIdleTimeout (default
// 5 s) without a packet from the peer, or after twice that in all, so it
// gets wait/2 there, and wait as its MaxIdleTimeout (default 30 s).

// satquicConfig is a satquic end's Config for a wait.
func satquicConfig(wait time.Duration) *Config {
	if wait == 0 {
		return nil
	}
	return &Config{HandshakeTimeout: wait, MaxIdleTimeout: wait}
}

// quicgoConfig is a quic-go end's Config for a wait.
func quicgoConfig(wait time.Duration) *quicgo.Config {
	return &quicgo.Config{HandshakeIdleTimeout: wait / 2, MaxIdleTimeout: wait}
}

var interopDirections = []interopDirection{
	{name: "satquic to quic-go", serve: serveQuicgoHQ, dial: dialSatquicHQ},
	{name: "quic-go to satquic", serve: serveSatquicHQ, dial: dialQuicgoHQ},
}

type satquicClient struct{ c *Conn }

func (s satquicClient) open(ctx context.Context) (io.ReadWriteCloser, error) {
	st, err := s.c.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	return st, deadlineFrom(ctx, st)
}

func (s satquicClient) close() { _ = s.c.CloseWithError(0, "") }

func (s satquicClient) String() string {
	return fmt.Sprintf("satquic client %v: %s", s.c.LocalAddr(), statsString(s.c.Stats()))
}

func dialSatquicHQ(ctx context.Context, addr string, wait time.Duration) (hqClient, error) {
	c, err := DialAddr(ctx, addr, clientTLS(), satquicConfig(wait))
	if err != nil {
		return nil, err
	}
	return satquicClient{c}, nil
}

// quicgoClient is a quic-go connection on a Transport of its own. A
// Transport from quicgo.DialAddr outlives its connection by three probe
// timeouts (it keeps answering for the closed connection), which on a
// long path is longer than a test waits for goroutines to end; closing
// the Transport ends it at once.
type quicgoClient struct {
	c  *quicgo.Conn
	tr *quicgo.Transport
	pc net.PacketConn
}

func (q quicgoClient) open(ctx context.Context) (io.ReadWriteCloser, error) {
	st, err := q.c.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	return st, deadlineFrom(ctx, st)
}

func (q quicgoClient) close() {
	_ = q.c.CloseWithError(0, "")
	_ = q.tr.Close()
	_ = q.pc.Close()
}

func (q quicgoClient) String() string {
	st := q.c.ConnectionStats()
	return fmt.Sprintf("quic-go client %v: srtt %v, %d/%d packets sent/received, %d lost",
		q.c.LocalAddr(), st.SmoothedRTT.Round(time.Millisecond), st.PacketsSent, st.PacketsReceived, st.PacketsLost)
}

func dialQuicgoHQ(ctx context.Context, addr string, wait time.Duration) (hqClient, error) {
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tr := &quicgo.Transport{Conn: pc}
	c, err := tr.Dial(ctx, ua, clientTLS(), quicgoConfig(wait))
	if err != nil {
		_ = tr.Close()
		_ = pc.Close()
		return nil, err
	}
	return quicgoClient{c: c, tr: tr, pc: pc}, nil
}

// deadlineFrom bounds a stream's reads and writes by ctx's deadline, so
// that a stalled transfer fails the test instead of hanging it.
func deadlineFrom(ctx context.Context, s interface{ SetDeadline(time.Time) error }) error {
	if dl, ok := ctx.Deadline(); ok {
		return s.SetDeadline(dl)
	}
	return nil
}

// statsString is the part of a satquic connection's counters that tells
// how a lossy or long path went.
func statsString(st ConnectionStats) string {
	return fmt.Sprintf("handshake %v, srtt %v, %d/%d packets sent/received, %d lost, %d PTOs, %d dropped",
		st.HandshakeDuration.Round(time.Millisecond), st.SmoothedRTT.Round(time.Millisecond),
		st.PacketsSent, st.PacketsReceived, st.PacketsLost, st.PTOs, st.PacketsDropped)
}

// serveSatquicHQ starts a satquic hq server; it stops when the test ends,
// and then logs the counters of the connections it served (shown with -v
// or on failure): each connection's when there was one or the test
// failed, a summary otherwise.
func serveSatquicHQ(t *testing.T, ctx context.Context, wait time.Duration) net.Addr {
	t.Helper()
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), satquicConfig(wait))
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []*Conn
	)
	wg.Go(func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			serveHQConn(ctx, &wg, satquicStreams(c))
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
		var ptos uint64
		var slowest time.Duration
		for i, c := range conns {
			st := c.Stats()
			ptos += st.PTOs
			slowest = max(slowest, st.HandshakeDuration)
			if t.Failed() || len(conns) == 1 {
				t.Logf("satquic server connection %d from %v: %s", i, c.RemoteAddr(), statsString(st))
			}
		}
		if len(conns) > 1 {
			t.Logf("satquic server: %d connections, %d PTOs in all, slowest handshake %v", len(conns), ptos, slowest.Round(time.Millisecond))
		}
	})
	return l.Addr()
}

// serveQuicgoHQ starts a quic-go hq server on a Transport of its own,
// which the cleanup closes with every connection: the Transport of
// quicgo.ListenAddr outlives its Listener while closed connections wait
// out three probe timeouts, which on a long path is longer than a test
// waits for goroutines to end.
func serveQuicgoHQ(t *testing.T, ctx context.Context, wait time.Duration) net.Addr {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &quicgo.Transport{Conn: pc}
	ln, err := tr.Listen(serverTLS(), quicgoConfig(wait))
	if err != nil {
		_ = pc.Close()
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			serveHQConn(ctx, &wg, quicgoStreams(c))
		}
	})
	t.Cleanup(func() {
		_ = tr.Close()
		_ = pc.Close()
		wg.Wait()
	})
	return ln.Addr()
}
