package recovery

import (
	"testing"
	"time"
)

// greedy sends size-byte packets as soon as the pacer allows, waking only
// at multiples of tick (a timer granularity), until end; it returns the
// send times.
func greedy(p *Pacer, rate uint64, capacity int64, size int, tick, end time.Duration) []time.Duration {
	var out []time.Duration
	for now := time.Duration(0); now <= end; {
		next := p.NextSendTime(now, size, rate, capacity)
		if next <= now {
			p.OnSent(now, size, rate, capacity)
			out = append(out, now)
			continue
		}
		if tick > 0 {
			next = (next + tick - 1) / tick * tick
		}
		now = next
	}
	return out
}

// 250 Mbit/s: 31.25 MB/s, one 1200-byte packet every 38.4 us after the
// initial burst of the bucket. The default bucket holds 2 ms of the rate,
// 62500 bytes (it was 10 packets when BurstTime was 250 us, which is less
// at this rate): 52 packets at once, the 53rd when the 1100 bytes missing
// from the 100 left have accrued (35.2 us), then one per 38.4 us.
func TestPacer250Mbps(t *testing.T) {
	const rate = 250_000_000 / 8
	capacity := Capacity(rate, 10, 1200, DefaultPacingBurstTime, 64<<20)
	if capacity != 62500 {
		t.Fatalf("capacity %d, want 62500 (2 ms at 31.25 MB/s > 10 packets)", capacity)
	}
	var p Pacer
	times := greedy(&p, rate, capacity, 1200, 0, 10*ms)
	for i := range 52 {
		if times[i] != 0 {
			t.Fatalf("burst packet %d at %v", i, times[i])
		}
	}
	for k := 0; 52+k < len(times); k++ {
		if want := 35200 + time.Duration(k)*38400; times[52+k] != want {
			t.Fatalf("packet %d at %v, want %v", 52+k, times[52+k], want)
		}
	}
	if got := len(times); got != 52+260 {
		t.Fatalf("%d packets in 10 ms, want 312", got)
	}
}

// A sender whose timer fires only every millisecond (late by up to 1 ms,
// as Go's timers on a busy machine) keeps the pacing rate with the default
// bucket; a bucket of 250 us overflows between wake-ups and loses most of
// the rate, which is why BurstTime covers timer lateness.
func TestPacerTimerLateness(t *testing.T) {
	const rate = 250_000_000 / 8
	send := func(burst time.Duration) int64 {
		capacity := Capacity(rate, 10, 1200, burst, 64<<20)
		var p Pacer
		return int64(len(greedy(&p, rate, capacity, 1200, ms, time.Second))) * 1200
	}
	got := send(DefaultPacingBurstTime)
	if want := int64(62500 + rate); got < want-1200 || got > want+1200 {
		t.Fatalf("sent %d bytes in 1 s waking every 1 ms, want %d +- 1200", got, want)
	}
	// 10 packets per wake-up: 12 MB/s of 31.25.
	if old := send(250 * time.Microsecond); old > rate/2 {
		t.Fatalf("a 250 us bucket sent %d bytes in 1 s waking every 1 ms; expected it to lose the rate", old)
	}
}

// A rate whose interval is not a whole number of nanoseconds: the k-th
// packet after the burst leaves at exactly ceil(k * 1200 s / rate), so the
// long-run rate is exact.
func TestPacerExactRemainder(t *testing.T) {
	const rate = 700_001
	var p Pacer
	times := greedy(&p, rate, 12000, 1200, 0, 2*time.Second)
	for k := 1; 9+k < len(times); k++ {
		num := uint64(k) * 1200 * uint64(time.Second)
		want := time.Duration((num + rate - 1) / rate)
		if times[9+k] != want {
			t.Fatalf("packet %d at %v, want %v", 9+k, times[9+k], want)
		}
	}
}

// 10 Gbit/s: packets 960 ns apart, a sender whose timer fires every 100 us
// sends bursts, and over a second the rate is exact within a packet.
func TestPacer10GbpsBursts(t *testing.T) {
	const rate = 10_000_000_000 / 8
	capacity := Capacity(rate, 10, 1200, DefaultPacingBurstTime, 64<<20)
	if capacity != 2_500_000 {
		t.Fatalf("capacity %d, want 2500000 (2 ms at 1.25 GB/s)", capacity)
	}
	var p Pacer
	times := greedy(&p, rate, capacity, 1200, 100*time.Microsecond, time.Second)
	sent := int64(len(times)) * 1200
	want := capacity + rate
	if d := sent - want; d < -1200 || d > 1200 {
		t.Fatalf("sent %d bytes in 1 s, want %d +- 1200", sent, want)
	}
	// Each wake-up after the first sends about 100 us of packets.
	perTick := 0
	for _, at := range times {
		if at == 500*time.Microsecond {
			perTick++
		}
	}
	if perTick < 104 || perTick > 105 {
		t.Fatalf("%d packets at one wake-up, want 104 or 105 (100 us / 960 ns)", perTick)
	}
}

// The bucket never holds more than its capacity after an idle period, and
// a debt is bounded.
func TestPacerIdleAndDebt(t *testing.T) {
	var p Pacer
	const rate = 1_000_000
	times := greedy(&p, rate, 6000, 1200, 0, 0)
	if len(times) != 5 {
		t.Fatalf("first burst %d packets, want 5", len(times))
	}
	// A long idle refills to capacity only.
	times = greedy(&p, rate, 6000, 1200, 0, 0)
	if len(times) != 0 {
		t.Fatal("sent without tokens")
	}
	var idle []time.Duration
	for now := 10 * time.Second; p.NextSendTime(now, 1200, rate, 6000) <= now; {
		p.OnSent(now, 1200, rate, 6000)
		idle = append(idle, now)
	}
	if len(idle) != 5 {
		t.Fatalf("after idle %d packets, want 5", len(idle))
	}
	for range 100 {
		p.OnSent(10*time.Second, 1200, rate, 6000)
	}
	// Debt is capped at one capacity: 6000 + 1200 bytes to earn.
	if got := p.NextSendTime(10*time.Second, 1200, rate, 6000); got != 10*time.Second+7200*time.Microsecond {
		t.Fatalf("after debt: next at %v, want 10.0072s", got)
	}
}

// The Sender paces at 1.25 * cwnd / smoothed_rtt (RFC 9002 section 7.7).
func TestSenderPacingRate(t *testing.T) {
	cfg := testConfig(CUBIC)
	cfg.Pacing.Disabled = false
	s := confirmed(t, cfg)
	// 1.25 * 12000 B / 333 ms = 45045.04 B/s.
	if got := s.PacingRate(); got != 45045 {
		t.Fatalf("rate %d, want 45045", got)
	}
	for pn := range uint64(10) {
		if next := s.NextSendTime(0, 1200); next != 0 {
			t.Fatalf("packet %d of the initial burst delayed to %v", pn, next)
		}
		send(t, s, 0, SpaceApplication, pn)
	}
	// The eleventh waits 1200 / 45045 s = 26.640027 ms (rounded up).
	if next := s.NextSendTime(0, 1200); next != 26640027*time.Nanosecond {
		t.Fatalf("next at %v, want 26.640027ms", next)
	}
}
