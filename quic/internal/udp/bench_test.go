package udp

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkLoopback measures bulk datagram throughput from one socket to
// another over loopback, one WriteBatch of the given batch size per
// operation, with a receiver goroutine reading 64-message batches. The
// sender keeps at most benchWindow datagrams unread, as a congestion
// window would, so the numbers are goodput, not what the receive buffer
// drops. Reported: received Gbit/s of payload, received datagrams/s, and
// loss (datagrams the socket buffer dropped; should be 0).
func BenchmarkLoopback(b *testing.B) {
	for _, mode := range modes {
		for _, size := range []int{1200, 1452} {
			for _, batch := range []int{1, 8, 32} {
				name := fmt.Sprintf("%s/size=%d/batch=%d", mode.name, size, batch)
				b.Run(name, func(b *testing.B) { benchLoopback(b, mode.opts, size, batch) })
			}
		}
	}
}

// benchWindow bounds unread datagrams: well inside an 8 MiB receive buffer
// even at the kernel's per-datagram overhead.
const benchWindow = 2048

func benchLoopback(b *testing.B, opts Options, size, batch int) {
	snd := listen(b, "udp4", "127.0.0.1:0", opts)
	rcv := listen(b, "udp4", "127.0.0.1:0", opts)
	dst := addrOf(rcv, lo4)

	var received, receivedBytes atomic.Int64
	progress := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		msgs := rcv.NewReadBatch(64)
		for {
			n, err := rcv.ReadBatch(msgs)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					err = nil
				}
				done <- err
				return
			}
			bytes := 0
			for _, m := range msgs[:n] {
				bytes += len(m.Data)
			}
			receivedBytes.Add(int64(bytes))
			received.Add(int64(n))
			select {
			case progress <- struct{}{}:
			default:
			}
		}
	}()

	msgs := make([]Message, batch)
	payload := make([]byte, batch*size)
	for i := range msgs {
		msgs[i] = Message{Data: payload[i*size : (i+1)*size], Addr: dst}
	}
	stall := time.NewTimer(time.Hour)
	defer stall.Stop()
	var sent, forgiven int64
	b.SetBytes(int64(size * batch))
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		for sent-received.Load()-forgiven > benchWindow {
			stall.Reset(200 * time.Millisecond)
			select {
			case <-progress:
			case <-stall.C:
				// Nothing read for a while: what is unread was dropped.
				forgiven = sent - received.Load()
			}
		}
		n, err := snd.WriteBatch(msgs)
		if err != nil {
			b.Fatal(err)
		}
		sent += int64(n)
	}
	elapsed := time.Since(start)
	got, gotBytes := received.Load(), receivedBytes.Load()
	for wait := time.Now(); received.Load() < sent && time.Since(wait) < 100*time.Millisecond; {
		time.Sleep(time.Millisecond)
	}
	lost := sent - received.Load()
	_ = rcv.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(gotBytes)*8/elapsed.Seconds()/1e9, "Gbit/s")
	b.ReportMetric(float64(got)/elapsed.Seconds(), "dgrams/s")
	b.ReportMetric(100*float64(lost)/float64(max(sent, 1)), "loss%")
}
