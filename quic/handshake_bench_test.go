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

	quicgo "github.com/quic-go/quic-go"

	"github.com/satquic/satquic/internal/testkit"
)

// The connection rate benchmark: how many new connections per second a
// server takes, each a full handshake (no resumption), one small request
// and answer on a stream, and a close, with a few clients dialing at
// once. satquic with satquic and quic-go with quic-go run in the same
// benchmark, batch after batch, so that both see the same load.

const (
	// handshakeBatch is how many connections one iteration opens with
	// each stack, handshakeClients of them at a time.
	handshakeBatch   = 64
	handshakeChunk   = 16
	handshakeClients = 4
)

// handshakeRequest is what each connection sends; the server echoes it.
var handshakeRequest = []byte("ping over a brand new connection")

// connRound opens one connection to addr, echoes handshakeRequest on a
// stream and closes the connection.
type connRound func(ctx context.Context, addr string) error

func satquicRound(ctx context.Context, addr string) error {
	c, err := DialAddr(ctx, addr, clientTLS(), nil)
	if err != nil {
		return err
	}
	defer c.CloseWithError(0, "")
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	return echoRound(s)
}

func quicgoRound(ctx context.Context, addr string) error {
	c, err := quicgo.DialAddr(ctx, addr, clientTLS(), &quicgo.Config{})
	if err != nil {
		return err
	}
	defer c.CloseWithError(0, "")
	s, err := c.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	return echoRound(s)
}

// echoRound sends the request, ends the stream and checks the echo.
func echoRound(s io.ReadWriteCloser) error {
	if _, err := s.Write(handshakeRequest); err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	got, err := io.ReadAll(s)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, handshakeRequest) {
		return fmt.Errorf("echo %q, want %q", got, handshakeRequest)
	}
	return nil
}

// runRounds opens n connections with round, handshakeClients at a time,
// and returns the first errors.
func runRounds(ctx context.Context, round connRound, addr string, n int) error {
	var wg sync.WaitGroup
	errs := make([]error, handshakeClients)
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for w := range handshakeClients {
		wg.Go(func() {
			for range next {
				if err := round(ctx, addr); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// echoStream answers a stream with what it carried.
func echoStream(rw io.ReadWriteCloser) {
	b, err := io.ReadAll(io.LimitReader(rw, 1<<10))
	if err != nil {
		return
	}
	if _, err := rw.Write(b); err != nil {
		return
	}
	_ = rw.Close()
}

// satquicEchoServer listens with satquic and echoes every stream of every
// connection, until the benchmark ends.
func satquicEchoServer(b *testing.B, ctx context.Context) string {
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			wg.Go(func() {
				for {
					s, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					echoStream(s)
				}
			})
		}
	})
	b.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
	})
	return l.Addr().String()
}

// quicgoEchoServer does the same with quic-go, on a Transport that the
// cleanup closes with its connections.
func quicgoEchoServer(b *testing.B, ctx context.Context) string {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	tr := &quicgo.Transport{Conn: pc}
	ln, err := tr.Listen(serverTLS(), &quicgo.Config{})
	if err != nil {
		_ = pc.Close()
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			wg.Go(func() {
				for {
					s, err := c.AcceptStream(ctx)
					if err != nil {
						return
					}
					echoStream(s)
				}
			})
		}
	})
	b.Cleanup(func() {
		_ = tr.Close()
		_ = pc.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// handshakeStack is one side of the comparison: how to open a connection,
// where its server listens, and the time it took.
type handshakeStack struct {
	round     connRound
	addr      string
	wall, cpu time.Duration
}

// BenchmarkHandshake measures new connections per second over loopback:
// satquic client and server, and quic-go client and server, each
// iteration opening handshakeBatch connections with each stack,
// handshakeClients at a time. The stacks take turns every handshakeChunk
// connections, in alternating order, so that the load of a shared machine
// falls on both alike. Both ends run in this process and share its cores.
// It reports each stack's connections per second, their ratio (satquic
// over quic-go), and the CPU time per connection, both ends together,
// which a busy machine disturbs less than the wall clock.
func BenchmarkHandshake(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	sq := &handshakeStack{round: satquicRound, addr: satquicEchoServer(b, ctx)}
	qg := &handshakeStack{round: quicgoRound, addr: quicgoEchoServer(b, ctx)}
	// Warm-up: the first handshakes fill caches and pools.
	for _, st := range []*handshakeStack{sq, qg} {
		if err := runRounds(ctx, st.round, st.addr, handshakeClients); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	for b.Loop() {
		for k := range handshakeBatch / handshakeChunk {
			order := []*handshakeStack{sq, qg}
			if k%2 == 1 {
				order[0], order[1] = qg, sq
			}
			for _, st := range order {
				start, cpu := time.Now(), testkit.ProcessCPU()
				if err := runRounds(ctx, st.round, st.addr, handshakeChunk); err != nil {
					b.Fatal(err)
				}
				st.wall += time.Since(start)
				st.cpu += testkit.ProcessCPU() - cpu
			}
		}
		n += handshakeBatch
	}
	rsq := float64(n) / sq.wall.Seconds()
	rqg := float64(n) / qg.wall.Seconds()
	b.ReportMetric(rsq, "satquic-conn/s")
	b.ReportMetric(rqg, "quic-go-conn/s")
	b.ReportMetric(rsq/rqg, "ratio")
	b.ReportMetric(float64(sq.cpu.Microseconds())/float64(n), "satquic-cpu-us/conn")
	b.ReportMetric(float64(qg.cpu.Microseconds())/float64(n), "quic-go-cpu-us/conn")
}

// BenchmarkHandshakeSatquic is BenchmarkHandshake's satquic half alone,
// one connection per iteration, handshakeClients at a time: both ends'
// heap per connection (B/op, allocs/op, the driver's and the core's with
// crypto/tls's) and the process's CPU per connection, both ends together.
func BenchmarkHandshakeSatquic(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	addr := satquicEchoServer(b, ctx)
	if err := runRounds(ctx, satquicRound, addr, handshakeClients); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := testkit.ProcessCPU()
	if err := runRounds(ctx, satquicRound, addr, b.N); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64((testkit.ProcessCPU()-cpu).Microseconds())/float64(b.N), "cpu-us/conn")
}
