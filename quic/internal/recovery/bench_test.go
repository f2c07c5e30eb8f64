package recovery

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// ackBench keeps 1000 packets in flight: each iteration acknowledges the
// oldest outstanding packet (leaving every lossEvery-th one out, which
// the thresholds then declare lost) and sends a new one.
type ackBench struct {
	s      *Sender
	pn     uint64
	now    time.Duration
	ranges []wire.AckRange
	ack    Ack
}

func newAckBench(tb testing.TB) *ackBench {
	cfg := DefaultConfig()
	cfg.Algorithm = CUBIC
	a := &ackBench{s: confirmed(tb, cfg), ranges: make([]wire.AckRange, 0, 64)}
	for range 1000 {
		a.send(tb)
	}
	return a
}

func (a *ackBench) send(tb testing.TB) {
	p := SentPacket{Space: SpaceApplication, Number: a.pn, Bytes: 1200, AckEliciting: true, InFlight: true, Ref: a.pn}
	if err := a.s.OnPacketSent(a.now, p); err != nil {
		tb.Fatal(err)
	}
	a.pn++
}

// step acknowledges packets up to pn-1000, except multiples of lossEvery
// among the last 64 ranges' worth, then sends one packet.
func (a *ackBench) step(tb testing.TB, lossEvery uint64) {
	a.now += 40 * time.Microsecond
	largest := a.pn - 1000
	a.ranges = a.ranges[:0]
	hi := largest
	for len(a.ranges) < cap(a.ranges) {
		if lossEvery == 0 || hi < lossEvery {
			a.ranges = append(a.ranges, wire.AckRange{Smallest: 0, Largest: hi})
			break
		}
		lo := hi / lossEvery * lossEvery
		if lo == hi {
			hi--
			continue
		}
		a.ranges = append(a.ranges, wire.AckRange{Smallest: lo + 1, Largest: hi})
		hi = lo - 1
	}
	a.ack = Ack{Ranges: a.ranges}
	if _, err := a.s.OnAck(a.now, SpaceApplication, &a.ack); err != nil {
		tb.Fatal(err)
	}
	a.send(tb)
}

func benchmarkOnAck(b *testing.B, lossEvery uint64) {
	a := newAckBench(b)
	for range 20000 {
		a.step(b, lossEvery)
	}
	b.ReportAllocs()
	for b.Loop() {
		a.step(b, lossEvery)
	}
	b.ReportMetric(float64(a.s.BytesInFlight())/1200, "inflight")
}

// BenchmarkOnAck: 1000 packets in flight, one acknowledged per ACK.
func BenchmarkOnAck(b *testing.B) {
	b.Run("inorder", func(b *testing.B) { benchmarkOnAck(b, 0) })
	b.Run("loss1pct", func(b *testing.B) { benchmarkOnAck(b, 100) })
}

// TestOnAckDoesNotAllocate is the benchmark's allocation claim as a test.
func TestOnAckDoesNotAllocate(t *testing.T) {
	for _, lossEvery := range []uint64{0, 100} {
		a := newAckBench(t)
		for range 20000 {
			a.step(t, lossEvery)
		}
		if n := testing.AllocsPerRun(1000, func() { a.step(t, lossEvery) }); n != 0 {
			t.Fatalf("loss every %d: %v allocations per ACK", lossEvery, n)
		}
	}
}
