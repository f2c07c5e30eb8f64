package quic

import (
	"context"
	"encoding/binary"
	"io"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	"github.com/satquic/satquic/internal/testkit"
)

// benchChunk is what a benchmark server writes, over and over.
var benchChunk = testkit.Payload(1<<20, 5)

// serveBulk answers a stream carrying an 8-byte size with that many bytes.
func serveBulk(rw io.ReadWriteCloser) {
	var sz [8]byte
	if _, err := io.ReadFull(rw, sz[:]); err != nil {
		return
	}
	for left := int(binary.BigEndian.Uint64(sz[:])); left > 0; {
		n, err := rw.Write(benchChunk[:min(left, len(benchChunk))])
		if err != nil {
			return
		}
		left -= n
	}
	_ = rw.Close()
}

// fetchBulk downloads size bytes on a new stream.
func fetchBulk(b *testing.B, s io.ReadWriteCloser, size int) {
	if _, err := s.Write(binary.BigEndian.AppendUint64(nil, uint64(size))); err != nil {
		b.Fatal(err)
	}
	_ = s.Close()
	n, err := io.Copy(io.Discard, s)
	if err != nil || n != int64(size) {
		b.Fatalf("received %d of %d bytes: %v", n, size, err)
	}
}

const benchSize = 64 << 20

// BenchmarkGoodput measures single-connection bulk goodput over loopback,
// server to client, for satquic and for quic-go in the same run: each
// iteration downloads benchSize bytes over each stack in turn, so that
// both see the same load on a shared machine. Both ends of each run in
// this process and share its cores. It reports each stack's Gbit/s, their
// ratio, and the CPU time each spends per byte (both ends together), which
// a busy machine disturbs less than the wall clock.
func BenchmarkGoodput(b *testing.B) {
	ctx := context.Background()
	sq := satquicBulkPair(b, ctx)
	qg := quicgoBulkPair(b, ctx)
	// One warm-up transfer each: slow start and window growth are not
	// what is measured.
	fetchBulk(b, sq(), benchSize)
	fetchBulk(b, qg(), benchSize)
	b.SetBytes(2 * benchSize)
	var tsq, tqg, csq, cqg time.Duration
	n := 0
	for b.Loop() {
		start, cpu0 := time.Now(), testkit.ProcessCPU()
		fetchBulk(b, sq(), benchSize)
		mid, cpu1 := time.Now(), testkit.ProcessCPU()
		fetchBulk(b, qg(), benchSize)
		tsq += mid.Sub(start)
		tqg += time.Since(mid)
		csq += cpu1 - cpu0
		cqg += testkit.ProcessCPU() - cpu1
		n++
	}
	bytes := float64(n) * benchSize
	gsq := bytes * 8 / tsq.Seconds() / 1e9
	gqg := bytes * 8 / tqg.Seconds() / 1e9
	b.ReportMetric(gsq, "satquic-Gbit/s")
	b.ReportMetric(gqg, "quic-go-Gbit/s")
	b.ReportMetric(gsq/gqg, "ratio")
	b.ReportMetric(float64(csq)/bytes, "satquic-cpu-ns/B")
	b.ReportMetric(float64(cqg)/bytes, "quic-go-cpu-ns/B")
}

// satquicBulkPair starts a satquic server and connects to it; the result
// opens a stream for a download.
func satquicBulkPair(b *testing.B, ctx context.Context) func() io.ReadWriteCloser {
	conf := &Config{MaxDatagramSize: 1452}
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), conf)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close() })
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		for {
			s, err := c.AcceptStream(ctx)
			if err != nil {
				return
			}
			go serveBulk(s)
		}
	}()
	c, err := DialAddr(ctx, l.Addr().String(), clientTLS(), conf)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.CloseWithError(0, "") })
	return func() io.ReadWriteCloser {
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
}

// quicgoBulkPair does the same with quic-go on both ends.
func quicgoBulkPair(b *testing.B, ctx context.Context) func() io.ReadWriteCloser {
	ln, err := quicgo.ListenAddr("127.0.0.1:0", serverTLS(), &quicgo.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ln.Close() })
	go func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		for {
			s, err := c.AcceptStream(ctx)
			if err != nil {
				return
			}
			go serveBulk(s)
		}
	}()
	c, err := quicgo.DialAddr(ctx, ln.Addr().String(), clientTLS(), &quicgo.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.CloseWithError(0, "") })
	return func() io.ReadWriteCloser {
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
}
