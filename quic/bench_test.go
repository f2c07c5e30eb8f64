package quic

import (
	"context"
	"encoding/binary"
	"io"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
)

// benchChunk is what a benchmark server writes, over and over.
var benchChunk = payload(1<<20, 5)

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
// server to client, for satquic and quic-go in the same run (both ends in
// this process, so they share the machine's cores). Compare the Gbit/s
// metrics of the two sub-benchmarks.
func BenchmarkGoodput(b *testing.B) {
	b.Run("satquic", func(b *testing.B) {
		ctx := context.Background()
		conf := &Config{MaxDatagramSize: 1452}
		l, err := ListenAddr("127.0.0.1:0", serverTLS(), conf)
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
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
		defer c.CloseWithError(0, "")
		runGoodput(b, func() io.ReadWriteCloser {
			s, err := c.OpenStreamSync(ctx)
			if err != nil {
				b.Fatal(err)
			}
			return s
		})
		st := c.Stats()
		b.ReportMetric(float64(st.PacketsLost), "lost")
	})
	b.Run("quic-go", func(b *testing.B) {
		ctx := context.Background()
		ln, err := quicgo.ListenAddr("127.0.0.1:0", serverTLS(), &quicgo.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
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
		defer c.CloseWithError(0, "")
		runGoodput(b, func() io.ReadWriteCloser {
			s, err := c.OpenStreamSync(ctx)
			if err != nil {
				b.Fatal(err)
			}
			return s
		})
	})
}

func runGoodput(b *testing.B, open func() io.ReadWriteCloser) {
	b.SetBytes(benchSize)
	// One warm-up transfer: slow start and window growth are not what
	// is measured.
	fetchBulk(b, open(), benchSize)
	start := time.Now()
	n := 0
	for b.Loop() {
		fetchBulk(b, open(), benchSize)
		n++
	}
	b.ReportMetric(float64(n)*benchSize*8/time.Since(start).Seconds()/1e9, "Gbit/s")
}
