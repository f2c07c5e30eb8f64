package recovery

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// bottleneck is a path in virtual time: a drop-tail FIFO queue of buffer
// bytes drained at rate bytes per second, oneWay delay in each direction,
// and a perfect receiver that acknowledges every packet the moment it
// arrives, over a lossless return path. Being FIFO, the path delivers
// ACKs in the order the packets were sent, so the receiver's state can be
// updated when a packet enters the queue.
type bottleneck struct {
	rate     uint64
	oneWay   time.Duration
	buffer   int64
	linkFree time.Duration

	top     [maxModelRanges]wire.AckRange // receiver ranges, descending
	nTop    int
	acks    []modelAck
	head    int
	dropped int
}

const maxModelRanges = 4

type modelAck struct {
	at     time.Duration
	n      int
	ranges [maxModelRanges]wire.AckRange
}

func (b *bottleneck) send(now time.Duration, pn uint64, size int) {
	var queued int64
	if b.linkFree > now {
		queued = int64(mulDivSat(b.rate, uint64(b.linkFree-now), nanosPerSecond))
	}
	if queued+int64(size) > b.buffer {
		b.dropped++
		return
	}
	b.linkFree = max(now, b.linkFree) + time.Duration(uint64(size)*nanosPerSecond/b.rate)
	b.receive(pn)
	a := modelAck{at: b.linkFree + 2*b.oneWay, n: b.nTop, ranges: b.top}
	if b.head > 4096 && b.head > len(b.acks)/2 {
		b.acks = append(b.acks[:0], b.acks[b.head:]...)
		b.head = 0
	}
	b.acks = append(b.acks, a)
}

// receive records pn in the receiver's ranges: numbers arrive in
// increasing order, so pn extends the top range or opens a new one.
func (b *bottleneck) receive(pn uint64) {
	if b.nTop > 0 && b.top[0].Largest+1 == pn {
		b.top[0].Largest = pn
		return
	}
	copy(b.top[1:], b.top[:maxModelRanges-1])
	b.top[0] = wire.AckRange{Smallest: pn, Largest: pn}
	b.nTop = min(b.nTop+1, maxModelRanges)
}

func (b *bottleneck) nextAck() (time.Duration, bool) {
	if b.head == len(b.acks) {
		return 0, false
	}
	return b.acks[b.head].at, true
}

// modelSample is the controller's state after an ACK.
type modelSample struct {
	at         time.Duration
	window     int
	phase      Phase
	reductions uint64
	ackedBytes int64
	bbr        BBRState
}

type modelRun struct {
	samples    []modelSample
	sentBytes  int64
	persistent int
	dropped    int
}

// goodput is the rate of acknowledged bytes between from and to, as a
// fraction of the link rate.
func (r *modelRun) utilization(rate uint64, from, to time.Duration) float64 {
	var bytes int64
	for _, s := range r.samples {
		if s.at > from && s.at <= to {
			bytes += s.ackedBytes
		}
	}
	return float64(bytes) / (float64(rate) * (to - from).Seconds())
}

// windowAt is the window after the last ACK before at.
func (r *modelRun) windowAt(at time.Duration) int {
	w := 0
	for _, s := range r.samples {
		if s.at > at {
			break
		}
		w = s.window
	}
	return w
}

// runModel drives a Sender with an infinite backlog over the bottleneck for
// the given virtual time, jumping from event to event.
func runModel(t *testing.T, cfg Config, b *bottleneck, duration time.Duration) *modelRun {
	t.Helper()
	s := newSender(t, cfg)
	s.ConfirmHandshake(0)
	run := &modelRun{}
	run.record(s, 0, &Result{})
	var pn uint64
	for now := time.Duration(0); now <= duration; {
		for at, ok := b.nextAck(); ok && at <= now; at, ok = b.nextAck() {
			a := &b.acks[b.head]
			b.head++
			res, err := s.OnAck(at, SpaceApplication, &Ack{Ranges: a.ranges[:a.n]})
			if err != nil {
				t.Fatalf("at %v: %v", at, err)
			}
			run.record(s, at, res)
		}
		if d, ok := s.Deadline(); ok && d <= now {
			run.record(s, now, s.OnTimeout(now))
		}
		for s.CanSend() && s.NextSendTime(now, seg) <= now {
			if err := s.OnPacketSent(now, SentPacket{Space: SpaceApplication, Number: pn, Bytes: seg, AckEliciting: true, InFlight: true}); err != nil {
				t.Fatal(err)
			}
			b.send(now, pn, seg)
			run.sentBytes += seg
			pn++
		}
		now = nextEvent(s, b, now, duration)
	}
	run.dropped = b.dropped
	return run
}

func nextEvent(s *Sender, b *bottleneck, now, duration time.Duration) time.Duration {
	next := duration + 1
	if at, ok := b.nextAck(); ok {
		next = min(next, at)
	}
	if d, ok := s.Deadline(); ok {
		next = min(next, d)
	}
	if s.CanSend() {
		next = min(next, s.NextSendTime(now, seg))
	}
	return max(next, now+1)
}

func (r *modelRun) record(s *Sender, at time.Duration, res *Result) {
	var acked int64
	for _, p := range res.Acked {
		acked += int64(p.Bytes)
	}
	if res.PersistentCongestion {
		r.persistent++
	}
	st := s.ControllerState()
	r.samples = append(r.samples, modelSample{at: at, window: st.Window, phase: st.Phase, reductions: st.Reductions, ackedBytes: acked, bbr: st.BBR.State})
}

// geoPath is 50 Mbit/s with a 600 ms round trip and a buffer of one
// bandwidth-delay product (3.75 MB): a GEO path like netsim's geo profile
// (docs/architecture.md, "Network profiles"), whose round trip is 650 ms.
func geoPath() *bottleneck {
	return &bottleneck{rate: 50_000_000 / 8, oneWay: 300 * ms, buffer: 50_000_000 / 8 * 6 / 10}
}

// CUBIC with HyStart++ and pacing fills a 50 Mbit/s x 600 ms path.
func TestModelCubicFillsGEOPath(t *testing.T) {
	b := geoPath()
	run := runModel(t, DefaultConfig(), b, 30*time.Second)
	u := run.utilization(b.rate, 10*time.Second, 30*time.Second)
	u5 := run.utilization(b.rate, 0, 10*time.Second)
	t.Logf("utilization 0-10 s %.3f, 10-30 s %.3f; dropped %d, window %d, reductions %d",
		u5, u, run.dropped, run.samples[len(run.samples)-1].window, run.samples[len(run.samples)-1].reductions)
	if u < 0.95 {
		t.Fatalf("utilization %.3f from 10 s to 30 s, want >= 0.95", u)
	}
	if run.persistent != 0 {
		t.Fatalf("%d persistent congestion events", run.persistent)
	}
}

// NewReno as RFC 9002 section 7 describes it: the window doubles each
// round trip in slow start, halves at most once per round trip on loss,
// and then grows by one datagram per window acknowledged.
func TestModelNewRenoGEOPath(t *testing.T) {
	b := geoPath()
	cfg := DefaultConfig()
	cfg.Algorithm = NewReno
	cfg.HyStart.Disabled = true
	cfg.LongRTT.Disabled = true
	run := runModel(t, cfg, b, 30*time.Second)
	t.Logf("utilization 0-10 s %.3f, 10-30 s %.3f; dropped %d, final window %d",
		run.utilization(b.rate, 0, 10*time.Second), run.utilization(b.rate, 10*time.Second, 30*time.Second),
		run.dropped, run.samples[len(run.samples)-1].window)

	// Slow start: the k-th round trip's ACKs arrive from 0.6 k s.
	for k := 1; k <= 5; k++ {
		at := time.Duration(k)*600*ms - 10*ms
		if got, want := run.windowAt(at), 12000<<(k-1); got != want {
			t.Fatalf("window at %v: %d, want %d", at, got, want)
		}
	}
	// Thousands of drops, a handful of reductions: one per round trip
	// with losses, not one per lost packet.
	if red := run.samples[len(run.samples)-1].reductions; run.dropped < 100*int(red) {
		t.Fatalf("%d reductions for %d drops", red, run.dropped)
	}
	checkNewRenoReductions(t, run)
	checkNewRenoAvoidance(t, run)
	if run.persistent != 0 {
		t.Fatalf("%d persistent congestion events", run.persistent)
	}
}

// checkNewRenoReductions: every reduction halves the window, and two
// reductions are at least the minimum RTT apart (one per recovery period).
func checkNewRenoReductions(t *testing.T, run *modelRun) {
	t.Helper()
	var last time.Duration
	n := 0
	for i := 1; i < len(run.samples); i++ {
		prev, cur := run.samples[i-1], run.samples[i]
		if cur.reductions == prev.reductions {
			continue
		}
		n++
		if cur.reductions != prev.reductions+1 {
			t.Fatalf("at %v: %d reductions in one ACK", cur.at, cur.reductions-prev.reductions)
		}
		if cur.window != prev.window/2 {
			t.Fatalf("at %v: window %d -> %d, want halving", cur.at, prev.window, cur.window)
		}
		if n > 1 && cur.at-last < 600*ms {
			t.Fatalf("reductions at %v and %v, less than an RTT apart", last, cur.at)
		}
		last = cur.at
	}
	if n == 0 {
		t.Fatal("no reduction: the buffer never overflowed")
	}
}

// checkNewRenoAvoidance: in congestion avoidance, the window grows by
// max_datagram_size * acked / cwnd summed over ACKs (RFC 9002 section
// 7.3.3), within a datagram per stretch between reductions.
func checkNewRenoAvoidance(t *testing.T, run *modelRun) {
	t.Helper()
	var want float64
	start, stretches := -1, 0
	for i := 1; i < len(run.samples); i++ {
		prev, cur := run.samples[i-1], run.samples[i]
		if cur.phase != PhaseCongestionAvoidance || prev.reductions != cur.reductions ||
			(prev.phase != PhaseCongestionAvoidance && prev.phase != PhaseRecovery) {
			start = -1
			continue
		}
		if start < 0 {
			start, want = i, 0
			continue
		}
		want += float64(seg) * float64(cur.ackedBytes) / float64(prev.window)
		got := float64(cur.window - run.samples[start].window)
		if got < want-2*seg || got > want+seg {
			t.Fatalf("from %v to %v: window grew %.0f, want %.0f", run.samples[start].at, cur.at, got, want)
		}
		if i+1 == len(run.samples) || run.samples[i+1].reductions != cur.reductions {
			if want > 2*seg {
				stretches++
			}
		}
	}
	if stretches == 0 {
		t.Fatal("no congestion avoidance stretch long enough to check")
	}
}
