package recovery

import (
	"errors"
	"testing"
	"time"
)

// lrConfig is DefaultConfig with the long-RTT slow start, HyStart++'s
// thresholds and pacing as a satquic endpoint has them, but without the
// first flight's jump (firstflight_test.go), so that the tests here see
// the growth and the delay exit.
func lrConfig(alg Algorithm) Config {
	cfg := DefaultConfig()
	cfg.Algorithm = alg
	cfg.LongRTT.NoJump = true
	return cfg
}

// lrPath drives a Sender by hand: packets of seg bytes, each ACK frame
// acknowledging a range, at explicit times.
type lrPath struct {
	t  *testing.T
	s  *Sender
	pn uint64
}

func newLRPath(t *testing.T, cfg Config) *lrPath {
	return &lrPath{t: t, s: confirmed(t, cfg)}
}

// burst sends n packets at now and returns the first number.
func (p *lrPath) burst(now time.Duration, n uint64) uint64 {
	p.t.Helper()
	first := p.pn
	sendN(p.t, p.s, now, first, n)
	p.pn += n
	return first
}

// ackUpTo acknowledges every packet up to and including pn at now.
func (p *lrPath) ackUpTo(now time.Duration, pn uint64) *Result {
	p.t.Helper()
	return ack(p.t, p.s, now, SpaceApplication, 0, rng(0, pn))
}

// The window grows by f = minRTT/ReferenceRTT bytes per byte acknowledged
// (6 on a 600 ms path), the first RTT sample scales the initial window by
// f, and the window is paced at (1+f) x cwnd/srtt.
func TestLongRTTGrowthAndPacing(t *testing.T) {
	p := newLRPath(t, lrConfig(CUBIC))
	p.burst(0, 10)
	if got := p.s.PacingRate(); got != windowRate(10*seg, DefaultInitialRTT, 1.25) {
		t.Fatalf("pacing before any sample %d, want RFC 9002's 1.25 x cwnd/srtt", got)
	}
	p.ackUpTo(600*ms, 0)
	// 6 initial windows, then 6 x 1200 bytes for the packet.
	if got, want := p.s.CongestionWindow(), 6*10*seg+6*seg; got != want {
		t.Fatalf("window %d after the first ACK, want %d", got, want)
	}
	if got, want := p.s.PacingRate(), uint64(7*(6*10*seg+6*seg)*10/6); got != want {
		t.Fatalf("pacing rate %d, want 7 x cwnd / 600 ms = %d", got, want)
	}
	for pn := uint64(1); pn < 10; pn++ {
		p.ackUpTo(600*ms+time.Duration(pn)*ms, pn)
	}
	if got, want := p.s.CongestionWindow(), 6*10*seg+10*6*seg; got != want {
		t.Fatalf("window %d after 10 ACKs, want %d", got, want)
	}
	if st := p.s.ControllerState(); st.Phase != PhaseSlowStart || st.SSThresh != InfiniteSSThresh {
		t.Fatalf("state %+v, want slow start", st)
	}
}

// A 50 ms path keeps RFC 9002's slow start: one byte per byte
// acknowledged, the initial window as it is, pacing at 1.25.
func TestLongRTTShortPathUnchanged(t *testing.T) {
	p := newLRPath(t, lrConfig(CUBIC))
	p.burst(0, 10)
	p.ackUpTo(50*ms, 9)
	if got := p.s.CongestionWindow(); got != 20*seg {
		t.Fatalf("window %d, want %d (doubling)", got, 20*seg)
	}
	if got, want := p.s.PacingRate(), windowRate(20*seg, 50*ms, 1.25); got != want {
		t.Fatalf("pacing %d, want %d", got, want)
	}
	// 70 ms is below MinRTT (80 ms): still RFC 9002's.
	p = newLRPath(t, lrConfig(NewReno))
	p.burst(0, 10)
	p.ackUpTo(70*ms, 9)
	if got := p.s.CongestionWindow(); got != 20*seg {
		t.Fatalf("window %d on 70 ms, want %d", got, 20*seg)
	}
	// And off, a GEO path too.
	cfg := lrConfig(CUBIC)
	cfg.LongRTT.Disabled = true
	p = newLRPath(t, cfg)
	p.burst(0, 10)
	p.ackUpTo(600*ms, 9)
	if got := p.s.CongestionWindow(); got != 20*seg {
		t.Fatalf("window %d with LongRTT off, want %d", got, 20*seg)
	}
}

// train sends groups of 10 packets, one every sendEvery from now, through
// a bottleneck that takes ackEvery per group: group i is acknowledged at
// now + rtt + i x ackEvery, so a train faster than the bottleneck queues
// ackEvery - sendEvery more per group. The groups are sent before the
// first ACK comes back, and then extra packets that are not acknowledged.
// It returns the time of the last ACK.
func (p *lrPath) train(now time.Duration, groups uint64, sendEvery, ackEvery, rtt time.Duration, extra uint64) time.Duration {
	p.t.Helper()
	first := p.pn
	for i := range groups {
		p.burst(now+time.Duration(i)*sendEvery, 10)
	}
	p.burst(now+time.Duration(groups)*sendEvery, extra)
	var at time.Duration
	for i := range groups {
		at = now + rtt + time.Duration(i)*ackEvery
		p.ackUpTo(at, first+10*i+9)
		if i+1 < groups && p.s.ControllerState().Phase != PhaseSlowStart {
			p.t.Fatalf("left slow start at ACK %d", i)
		}
	}
	return at
}

// exitScenario: the first round trip over a 600 ms path, then a train
// (and inFlight packets that stay unacknowledged) through a bottleneck that
// queues
// 16 ms (the threshold) from the group of index 16ms/(ackEvery-sendEvery),
// rounded up, so that slow start ends 7 groups later. The ACKs come at the
// bottleneck's rate, 10 packets per ackEvery. cwnd grows by 144 kB on the
// first ACK and 72 kB per group.
func exitScenario(t *testing.T, cfg Config, sendEvery, ackEvery time.Duration, inFlight uint64) (*lrPath, time.Duration) {
	p := newLRPath(t, cfg)
	p.burst(0, 10)
	p.ackUpTo(600*ms, 9)
	q := ackEvery - sendEvery
	groups := uint64((16*ms+q-1)/q) + 8
	return p, p.train(700*ms, groups, sendEvery, ackEvery, 600*ms, inFlight)
}

// Eight consecutive samples above the minimum RTT by the threshold (16 ms)
// end slow start. The bottleneck passes 12 kB per 2 ms, 6 MB/s, so the
// window becomes 1.25 x 6 MB/s x 600 ms = 4.5 MB: more than the 1.8 MB it
// was, so no recovery period. The sender paces at 6 MB/s until a packet
// sent after the exit is acknowledged, then CUBIC continues from 4.5 MB
// with RFC 9002's 1.25 x pacing.
func TestLongRTTDelayExitRaises(t *testing.T) {
	p, at := exitScenario(t, lrConfig(CUBIC), ms, 2*ms, 0)
	const rate = 10 * seg * 500 // bytes per second
	target := int(1.25 * rate * 0.6)
	st := p.s.ControllerState()
	if st.Phase != PhaseCongestionAvoidance || st.Window != target || st.SSThresh != target || st.Reductions != 0 {
		t.Fatalf("state %+v after the exit, want window and ssthresh %d, no reduction", st, target)
	}
	if got := p.s.PacingRate(); got != rate {
		t.Fatalf("pacing %d during the hold, want the measured %d", got, rate)
	}
	// Packets sent before the exit do not end the hold.
	next := p.burst(at+ms, 1)
	p.ackUpTo(at+ms, next-1)
	if got := p.s.PacingRate(); got != rate {
		t.Fatalf("pacing %d, want the hold's %d", got, rate)
	}
	p.ackUpTo(at+601*ms, next)
	if got, want := p.s.PacingRate(), windowRate(p.s.CongestionWindow(), p.s.RTT().SmoothedRTT(), 1.25); got != want {
		t.Fatalf("pacing %d after the hold, want %d", got, want)
	}
	if got := p.s.CongestionWindow(); got < target || got > target+seg {
		t.Fatalf("window %d after the hold, want CUBIC from %d", got, target)
	}
	if st := p.s.ControllerState(); st.WMax != target || st.K != 0 {
		t.Fatalf("CUBIC state %+v, want W_max %d and K 0", st, target)
	}
}

// The raise is at most the next round trip's growth, (1+f) x cwnd: a
// burst through a 60 MB/s bottleneck (45 MB with the headroom) ends slow
// start 88 groups in, with cwnd at 144 kB + 87 x 72 kB.
func TestLongRTTDelayExitRaiseCapped(t *testing.T) {
	p, _ := exitScenario(t, lrConfig(CUBIC), 0, 200*time.Microsecond, 0)
	if got, want := p.s.CongestionWindow(), 7*(144000+87*72000); got != want {
		t.Fatalf("window %d, want %d", got, want)
	}
}

// A bottleneck of 12 kB per 20 ms, 600 kB/s, fed every 10 ms: slow start
// ends 10 groups in, with a 450 kB window, less than the 792 kB the window
// had grown to. The exit is a reduction: a recovery period starts, the
// window keeps the 600 kB still in flight while the sender paces at the
// measured rate, and a loss of a packet sent before the exit does not
// reduce the window again.
func TestLongRTTDelayExitReduces(t *testing.T) {
	for _, alg := range []Algorithm{CUBIC, NewReno} {
		t.Run(alg.String(), func(t *testing.T) {
			p, at := exitScenario(t, lrConfig(alg), 10*ms, 20*ms, 500)
			const rate = 10 * seg * 50
			target := int(1.25 * rate * 0.6)
			st := p.s.ControllerState()
			if st.Phase != PhaseRecovery || st.Reductions != 1 || st.SSThresh != target || st.Window != 500*seg {
				t.Fatalf("state %+v, want recovery, ssthresh %d, window %d", st, target, 500*seg)
			}
			if got := p.s.PacingRate(); got != rate {
				t.Fatalf("pacing %d, want %d", got, rate)
			}
			// The 500 packets after the train's 100, sent before the
			// exit: two of them lost.
			res := ack(t, p.s, at+ms, SpaceApplication, 0, rng(112, 609, 0, 109))
			if len(res.Lost) != 2 {
				t.Fatalf("%d packets lost, want 2", len(res.Lost))
			}
			if st := p.s.ControllerState(); st.Reductions != 1 || st.Window != 500*seg {
				t.Fatalf("state %+v after losing packets sent before the exit", st)
			}
			// A packet sent after the exit acknowledged: the window
			// becomes the target.
			next := p.burst(at+2*ms, 1)
			ack(t, p.s, at+602*ms, SpaceApplication, 0, rng(112, next, 0, 109))
			if got := p.s.CongestionWindow(); got < target || got > target+seg {
				t.Fatalf("window %d after the hold, want %d", got, target)
			}
		})
	}
}

// A loss of a packet sent after the exit ends the hold and reduces from
// the measured window.
func TestLongRTTLossAfterExit(t *testing.T) {
	p, at := exitScenario(t, lrConfig(CUBIC), 10*ms, 20*ms, 0)
	target := 1.25 * 10 * seg * 50 * 0.6
	next := p.burst(at+ms, 4)
	ack(t, p.s, at+601*ms, SpaceApplication, 0, rng(next+1, next+3, 0, next-1))
	st := p.s.ControllerState()
	if st.Reductions != 2 || st.Window != int(target*cubicBeta) {
		t.Fatalf("state %+v, want a second reduction to 0.7 x %v", st, target)
	}
	if got, want := p.s.PacingRate(), windowRate(st.Window, p.s.RTT().SmoothedRTT(), 1.25); got != want {
		t.Fatalf("pacing %d, want the window's %d", got, want)
	}
}

// Runs of 7 samples above the threshold are not a queue; ACKs the peer
// says it delayed by 25 ms are not one either.
func TestLongRTTNoExitOnShortRuns(t *testing.T) {
	p := newLRPath(t, lrConfig(CUBIC))
	p.burst(0, 10)
	p.ackUpTo(600*ms, 9)
	// Queues of 20 ms, but for the 8th group.
	first := p.burst(700*ms, 150)
	for i := range uint64(15) {
		delay := 620 * ms
		if i == 7 {
			delay = 600 * ms
		}
		p.ackUpTo(700*ms+delay+time.Duration(i)*ms, first+10*i+9)
	}
	if st := p.s.ControllerState(); st.Phase != PhaseSlowStart {
		t.Fatalf("phase %v after broken runs", st.Phase)
	}
	now := 2 * time.Second
	first = p.burst(now, 100)
	for i := range uint64(10) {
		ack(t, p.s, now+625*ms, SpaceApplication, 25*ms, rng(0, first+10*i+9))
	}
	if st := p.s.ControllerState(); st.Phase != PhaseSlowStart {
		t.Fatalf("phase %v after delayed ACKs", st.Phase)
	}
}

// A loss before any RTT increase ends the accelerated slow start; the
// reduction starts from at most the bandwidth-delay product the trains
// measured (10 packets per 10 ms: 1.2 MB/s, 720 kB in 600 ms), not from
// the 864 kB the window had grown to.
func TestLongRTTLossBeforeExit(t *testing.T) {
	p := newLRPath(t, lrConfig(CUBIC))
	p.burst(0, 10)
	p.ackUpTo(600*ms, 9)
	p.train(700*ms, 10, 10*ms, 10*ms, 600*ms, 0)
	if w := p.s.CongestionWindow(); w != 144000+10*72000 {
		t.Fatalf("window %d before the loss", w)
	}
	now := 2 * time.Second
	first := p.burst(now, 10)
	ack(t, p.s, now+600*ms, SpaceApplication, 0, rng(first+4, first+9, 0, first+2))
	st := p.s.ControllerState()
	w := 720000.0
	if st.Reductions != 1 || st.Window != int(w*cubicBeta) || st.WMax != 720000 {
		t.Fatalf("state %+v, want W_max 720000 and window 0.7 x that", st)
	}
	if p.s.InSlowStart() {
		t.Fatal("still in slow start")
	}
}

// A minimum RTT that falls below MinRTT (the path changed) returns to RFC
// 9002's slow start: doubling, and a loss reduces from the window.
func TestLongRTTShorterPath(t *testing.T) {
	p := newLRPath(t, lrConfig(CUBIC))
	p.burst(0, 10)
	p.ackUpTo(600*ms, 9)
	p.train(700*ms, 10, 10*ms, 10*ms, 600*ms, 0)
	w := p.s.CongestionWindow()
	first := p.burst(2*time.Second, 10)
	p.ackUpTo(2*time.Second+60*ms, first+4)
	if got := p.s.CongestionWindow(); got != w+5*seg {
		t.Fatalf("window %d on a 60 ms path, want %d", got, w+5*seg)
	}
	ack(t, p.s, 2*time.Second+61*ms, SpaceApplication, 0, rng(first+6, first+9, 0, first+4))
	if st := p.s.ControllerState(); st.WMax != w+5*seg {
		t.Fatalf("W_max %d, want the whole window %d", st.WMax, w+5*seg)
	}
}

// trainSample: a train faster than the bottleneck comes back at the
// bottleneck's rate; ACKs bunched by the return path never read faster
// than the packets were sent.
func TestLongRTTTrainRate(t *testing.T) {
	var l longRTT
	rtt := &RTTStats{hasSample: true, min: 600 * ms, latest: 600 * ms, smoothed: 600 * ms}
	feed := func(i int, at, sent time.Duration) {
		ev := &AckEvent{
			Acked:      []PacketInfo{{TimeSent: sent, Bytes: seg, InFlight: true}},
			AckedBytes: seg, Delivered: int64((i + 1) * seg), RTT: rtt,
		}
		l.trainSample(at, ev)
	}
	// Sent 1 ms apart, acknowledged 2 ms apart: 600 kB/s.
	for i := range 9 {
		feed(i, time.Second+time.Duration(2*i)*ms, time.Duration(i)*ms)
	}
	if l.trainRate != seg*500 {
		t.Fatalf("rate %d, want %d", l.trainRate, seg*500)
	}
	// Sent 4 ms apart, acknowledged all at once: 300 kB/s, not infinite.
	l = longRTT{}
	for i := range 9 {
		feed(i, time.Second, time.Duration(4*i)*ms)
	}
	if l.trainRate != seg*250 {
		t.Fatalf("rate %d, want %d", l.trainRate, seg*250)
	}
}

// The model path (50 Mbit/s, 600 ms, a buffer of one bandwidth-delay
// product, an ACK per packet): the accelerated slow start fills the path in
// under 2 s with no loss, where RFC 9002's slow start and HyStart++ take
// 7 s and overflow the buffer.
func TestLongRTTModelGEOPath(t *testing.T) {
	b := geoPath()
	run := runModel(t, lrConfig(CUBIC), b, 5*time.Second)
	bdp := int(b.rate) * 6 / 10
	u := run.utilization(b.rate, 0, 5*time.Second)
	exit := time.Duration(-1)
	for _, s := range run.samples {
		if s.phase != PhaseSlowStart {
			exit = s.at
			break
		}
	}
	t.Logf("exit at %v, utilization 0-5 s %.3f, dropped %d, window %d (BDP %d)", exit, u, run.dropped, run.samples[len(run.samples)-1].window, bdp)
	if exit < 0 || exit > 2*time.Second {
		t.Fatalf("slow start ended at %v, want before 2 s", exit)
	}
	if run.dropped != 0 {
		t.Fatalf("%d packets dropped", run.dropped)
	}
	w := run.samples[len(run.samples)-1].window
	if w < bdp || w > bdp*3/2 {
		t.Fatalf("window %d, want between the bandwidth-delay product %d and 1.5 times it", w, bdp)
	}
	// The path delivers the first 5 s at more than half its rate (the
	// first 1.2 s are the handshake-free first round trips).
	if u < 0.5 {
		t.Fatalf("utilization %.3f over 0-5 s", u)
	}
	cfg := lrConfig(CUBIC)
	cfg.LongRTT.Disabled = true
	off := runModel(t, cfg, geoPath(), 5*time.Second)
	if uo := off.utilization(b.rate, 0, 5*time.Second); uo*5 > u {
		t.Fatalf("utilization %.3f with LongRTT off, want less than a fifth of %.3f", uo, u)
	}
}

func TestLongRTTConfigValidation(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.LongRTT.ReferenceRTT = 0 },
		func(c *Config) { c.LongRTT.MinRTT = -time.Millisecond },
		func(c *Config) { c.LongRTT.MaxFactor = 0.5 },
		func(c *Config) { c.LongRTT.MaxFactor = 101 },
		func(c *Config) { c.HyStart.Disabled, c.HyStart.MaxRTTThresh = true, 0 },
	} {
		cfg := DefaultConfig()
		mod(&cfg)
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Fatalf("New(%+v) = %v, want ErrInvalidConfig", cfg.LongRTT, err)
		}
		cfg.LongRTT.Disabled = true
		if _, err := New(cfg); err != nil {
			t.Fatalf("LongRTT off: %v", err)
		}
	}
}
