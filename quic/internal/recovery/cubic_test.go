package recovery

import (
	"math"
	"testing"
	"time"
)

const seg = DefaultMaxDatagramSize

// cubicAt returns a CUBIC controller in congestion avoidance with the given
// window, as if a congestion event at time 0 had taken it from wMax.
func cubicAt(t *testing.T, cwndSegs float64, fastConvergence bool) *cubic {
	t.Helper()
	cfg := testConfig(CUBIC)
	cfg.CUBIC.NoFastConvergence = !fastConvergence
	c := newCubic(&cfg)
	c.cwndF = cwndSegs * seg
	c.cwnd = int(c.cwndF)
	c.ssthresh = c.cwnd
	c.OnCongestionEvent(0, &CongestionEvent{Cause: CauseLoss, LostBytes: seg})
	return c
}

// ackPackets acknowledges n full-size packets sent just after the recovery
// period began.
func ackPackets(c Controller, now time.Duration, n int, srtt time.Duration) {
	pkts := make([]PacketInfo, n)
	for i := range pkts {
		pkts[i] = PacketInfo{Space: SpaceApplication, TimeSent: now, Bytes: seg, AckEliciting: true, InFlight: true}
	}
	rtt := RTTStats{smoothed: srtt, latest: srtt, min: srtt, hasSample: true}
	c.OnAck(now, &AckEvent{Acked: pkts, AckedBytes: int64(n * seg), RTT: &rtt, HasRTTSample: true})
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// W_cubic(t) = C*(t-K)^3 + W_max with K = cbrt((W_max - cwnd_epoch)/C)
// (RFC 9438 section 4.2). For W_max = 100 and cwnd_epoch = 70 segments,
// K = cbrt(75); the values were computed independently from the formula.
func TestCubicWindowFunction(t *testing.T) {
	cfg := testConfig(CUBIC)
	c := newCubic(&cfg)
	c.wMax = 100 * seg
	c.cwndF = 70 * seg
	c.startEpoch(0)
	if !near(c.k, 4.217163326508746, 1e-12) {
		t.Fatalf("K = %v, want cbrt(75) = 4.217163326508746", c.k)
	}
	for _, tc := range []struct{ t, w float64 }{
		{0, 70},
		{1, 86.68076383512988},
		{2, 95.64033568663878},
		{4.217163326508746, 100},
		{6, 102.26670325646442},
		{10, 177.35399908835427},
	} {
		if got := c.wCubic(tc.t) / seg; !near(got, tc.w, 1e-9) {
			t.Errorf("W_cubic(%v) = %v segments, want %v", tc.t, got, tc.w)
		}
	}
}

// Multiplicative decrease and fast convergence (RFC 9438 sections 4.6 and
// 4.7).
func TestCubicDecreaseAndFastConvergence(t *testing.T) {
	for _, fc := range []bool{true, false} {
		c := cubicAt(t, 100, fc)
		st := c.State()
		if st.Window != 70*seg || st.SSThresh != 70*seg || st.WMax != 100*seg {
			t.Fatalf("first event: %+v", st)
		}
		// The window grew back only to 80 segments when the next event
		// comes: the saturation point dropped.
		c.cwndF, c.cwnd = 80*seg, 80*seg
		c.OnCongestionEvent(time.Second, &CongestionEvent{Cause: CauseLoss, LargestSentTime: 500 * ms})
		st = c.State()
		wantWMax := 80 * seg
		if fc {
			wantWMax = 68 * seg // 80 * (1 + 0.7) / 2
		}
		if st.Window != 56*seg || st.WMax != wantWMax {
			t.Fatalf("fast convergence %v: window %d W_max %d, want %d %d", fc, st.Window, st.WMax, 56*seg, wantWMax)
		}
	}
}

// A long-RTT, large-window path is in the concave then convex region: the
// window follows W_cubic, reaching W_max at K whatever the RTT.
func TestCubicConcaveConvex(t *testing.T) {
	c := cubicAt(t, 1000, true)
	srtt := 600 * ms
	k := math.Cbrt(300 / cubicC)
	var now time.Duration
	step := func(until time.Duration) {
		for now < until {
			// One packet acknowledged per cwnd/srtt interval.
			now += srtt / time.Duration(c.cwnd/seg)
			ackPackets(c, now, 1, srtt)
		}
	}
	epoch := srtt / 100
	for _, at := range []float64{2, 5, k, 11} {
		step(epoch + time.Duration(at*float64(time.Second)))
		got := float64(c.cwnd) / seg
		// Each ACK closes (target - cwnd)/cwnd of the gap to
		// W_cubic(t+RTT), so the window stays within an RTT of the curve
		// (and within half a segment where the curve is flat, at K).
		lo := cubicC*math.Pow(at-srtt.Seconds()-k, 3) + 1000
		hi := cubicC*math.Pow(at+srtt.Seconds()-k, 3) + 1000
		if got < lo-0.5 || got > hi+0.5 {
			t.Fatalf("t=%.2fs: window %.2f segments, want in [W_cubic(t-RTT), W_cubic(t+RTT)] = [%.2f, %.2f]", at, got, lo, hi)
		}
	}
	if st := c.State(); st.Phase != PhaseCongestionAvoidance || !near(st.K.Seconds(), k, 1e-6) {
		t.Fatalf("state %+v, K want %v", st, k)
	}
}

// A short-RTT, small-window path is in the Reno-friendly region (RFC 9438
// section 4.3): the window follows W_est, growing by alpha_cubic = 0.529
// segments per RTT up to the window before the reduction, then by 1.
func TestCubicRenoFriendly(t *testing.T) {
	c := cubicAt(t, 20, true)
	srtt := 10 * ms
	var now time.Duration
	rtts := func(n int) {
		for range n {
			now += srtt
			ackPackets(c, now, c.cwnd/seg, srtt)
		}
	}
	rtts(10)
	// About 14 + 10 * 0.529 = 19.3 segments, while W_cubic(0.1 s) is 14.6.
	if got := float64(c.cwnd) / seg; got < 18.8 || got > 19.4 {
		t.Fatalf("after 10 RTTs: %.2f segments, want about 19.3", got)
	}
	rtts(90)
	// Reaching 20 segments took about 11 RTTs; 89 more at 1 per RTT.
	wc := cubicC*math.Pow(now.Seconds()-c.k, 3) + 20
	if got := float64(c.cwnd) / seg; got < 105 || got > 110 || got < wc+50 {
		t.Fatalf("after 100 RTTs: %.2f segments, want about 108 (W_cubic %.2f)", got, wc)
	}
}

// After slow start ends without loss (HyStart++), and after persistent
// congestion, the stage starts with K = 0 and W_max = cwnd (RFC 9438
// sections 4.8 and 4.10): convex growth from the start.
func TestCubicEpochWithoutWMax(t *testing.T) {
	cfg := testConfig(CUBIC)
	c := newCubic(&cfg)
	c.ssthresh = c.cwnd
	ackPackets(c, 100*ms, 1, 100*ms)
	st := c.State()
	if st.K != 0 || st.WMax != 12000 || st.Window <= 12000 {
		t.Fatalf("state %+v, want K 0, W_max 12000 and growth", st)
	}

	c = cubicAt(t, 100, true)
	c.OnCongestionEvent(time.Second, &CongestionEvent{Cause: CauseLoss, LargestSentTime: time.Second, Persistent: true})
	if c.cwnd != 2*seg {
		t.Fatalf("window %d after persistent congestion", c.cwnd)
	}
	// Slow start back to the threshold, then a stage with K = 0.
	for now := time.Second; c.InSlowStart(); now += 100 * ms {
		ackPackets(c, now+time.Millisecond, c.cwnd/seg, 100*ms)
	}
	ackPackets(c, 5*time.Second, 1, 100*ms)
	if st := c.State(); st.K != 0 || st.WMax < st.SSThresh {
		t.Fatalf("state %+v", st)
	}
}

// Idle time does not count in t (RFC 9438 section 5.8): sending after a
// period with nothing in flight moves the epoch forward by the idle time.
func TestCubicIdleShiftsEpoch(t *testing.T) {
	c := cubicAt(t, 100, true)
	ackPackets(c, time.Second, 1, 100*ms)
	if !c.hasEpoch || c.epochStart != time.Second {
		t.Fatalf("epoch %v %v", c.hasEpoch, c.epochStart)
	}
	c.OnPacketSent(1500*ms, seg, 10*seg)
	c.OnPacketSent(4*time.Second, seg, 0)
	if c.epochStart != 3500*ms {
		t.Fatalf("epoch start %v, want 3.5s (moved by 2.5 s of idle)", c.epochStart)
	}
}
