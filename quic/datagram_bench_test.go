package quic

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkDatagrams measures DATAGRAM frame throughput over loopback,
// client to server, with 1452-byte UDP datagrams each carrying one
// datagram of the largest payload. The sender keeps at most a send queue's
// worth unanswered by the receiver's count, so that the queue does not
// drop; a datagram loopback loses is written off after a pause. It
// reports the delivered Mbit/s of payload and the datagrams dropped or
// lost.
func BenchmarkDatagrams(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conf := &Config{MaxDatagramSize: 1452, EnableDatagrams: true}
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), conf)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = l.Close() })
	var received atomic.Int64
	go func() {
		s, err := l.Accept(ctx)
		if err != nil {
			return
		}
		for {
			if _, err := s.ReceiveDatagram(ctx); err != nil {
				return
			}
			received.Add(1)
		}
	}()
	c, err := DialAddr(ctx, l.Addr().String(), clientTLS(), conf)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.CloseWithError(0, "") })
	// Path MTU discovery raises the size once the handshake is
	// confirmed: wait for the largest payload.
	deadline := time.Now().Add(5 * time.Second)
	for c.Stats().MaxDatagramSize < 1452 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	msg := make([]byte, c.MaxDatagramPayloadSize())
	const window = 200
	var writtenOff int64
	b.SetBytes(int64(len(msg)))
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		for stalled := 0; int64(i)-received.Load()-writtenOff >= window; stalled++ {
			if stalled > 1000 {
				writtenOff++ // lost on loopback
				stalled = 0
			}
			time.Sleep(100 * time.Microsecond)
		}
		if err := c.SendDatagram(msg); err != nil {
			b.Fatal(err)
		}
	}
	// The last ones arrive, or are lost.
	for wait := time.Now().Add(time.Second); received.Load()+writtenOff < int64(b.N) && time.Now().Before(wait); {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	got := received.Load()
	st := c.Stats().Datagrams
	b.ReportMetric(float64(got)*float64(len(msg))*8/elapsed.Seconds()/1e6, "Mbit/s")
	b.ReportMetric(float64(int64(b.N)-got), "missing")
	b.ReportMetric(float64(st.SendDropped), "dropped")
}
