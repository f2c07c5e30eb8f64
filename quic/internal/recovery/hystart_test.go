package recovery

import (
	"testing"
	"time"
)

// flights drives a Sender one round trip at a time: a full window sent at
// once, each packet acknowledged alone rtt + i*10us later, so the round's
// minimum RTT is rtt.
type flights struct {
	t   *testing.T
	s   *Sender
	pn  uint64
	now time.Duration
}

const ackSpacing = 10 * time.Microsecond

func (f *flights) round(rtt time.Duration) {
	f.t.Helper()
	n := uint64(f.s.CongestionWindow() / seg)
	first := f.pn
	sendN(f.t, f.s, f.now, first, n)
	f.pn += n
	for i := range n {
		ack(f.t, f.s, f.now+rtt+time.Duration(i)*ackSpacing, SpaceApplication, 0, rng(0, first+i))
	}
	f.now += rtt + time.Duration(n)*ackSpacing
}

func hystartSender(t *testing.T) *flights {
	cfg := testConfig(NewReno)
	cfg.HyStart.Disabled = false
	cfg.Pacing.Disabled = false // L = infinity (RFC 9406 section 4.3)
	return &flights{t: t, s: confirmed(t, cfg)}
}

// HyStart++ (RFC 9406 section 4.2): an RTT increase of at least
// max(4 ms, min(lastRoundMinRTT/8, 16 ms)) moves slow start to CSS, where
// the window grows by a quarter; after 5 CSS rounds, congestion avoidance.
func TestHyStartExitOnRTTIncrease(t *testing.T) {
	f := hystartSender(t)
	f.round(100 * ms) // 10 packets: 12000 -> 24000
	f.round(100 * ms) // 20 packets: -> 48000
	wantWindow(t, f.s, 48000, InfiniteSSThresh, PhaseSlowStart)
	// 112 ms is below 100 + 12.5: still slow start.
	f.round(112 * ms) // 40 packets: -> 96000
	wantWindow(t, f.s, 96000, InfiniteSSThresh, PhaseSlowStart)
	// Threshold now 112/8 = 14 ms: at 126 ms the 8th sample moves to CSS;
	// 8 packets grow by 1200, the other 72 by 300.
	f.round(126 * ms)
	wantWindow(t, f.s, 96000+8*1200+72*300, InfiniteSSThresh, PhaseConservativeSlowStart)
	// Four more CSS rounds at the same RTT grow by a quarter per ACK.
	for range 4 {
		before := f.s.CongestionWindow()
		f.round(126 * ms)
		if got, want := f.s.CongestionWindow(), before+before/seg*300; got != want {
			t.Fatalf("CSS round: window %d, want %d", got, want)
		}
	}
	// The first ACK of the next round completes the fifth CSS round.
	w := f.s.CongestionWindow()
	f.round(126 * ms)
	wantWindow(t, f.s, w, w, PhaseCongestionAvoidance)
	// Congestion avoidance: one datagram per window acknowledged.
	f.round(126 * ms)
	wantWindow(t, f.s, w+seg, w, PhaseCongestionAvoidance)
}

// An RTT back below the CSS baseline was jitter: slow start resumes.
func TestHyStartCSSBackToSlowStart(t *testing.T) {
	f := hystartSender(t)
	f.round(100 * ms)
	f.round(100 * ms)
	f.round(120 * ms)
	if f.s.ControllerState().Phase != PhaseConservativeSlowStart {
		t.Fatal("no CSS after a 20 ms increase")
	}
	w := f.s.CongestionWindow()
	f.round(100 * ms)
	// 8 ACKs at a quarter until the 8th sample, then full growth.
	n := w / seg
	wantWindow(t, f.s, w+8*300+(n-8)*1200, InfiniteSSThresh, PhaseSlowStart)
}

// On a 600 ms path the threshold is capped at 16 ms.
func TestHyStartGEOThreshold(t *testing.T) {
	f := hystartSender(t)
	f.round(600 * ms)
	f.round(600 * ms)
	f.round(615 * ms)
	if f.s.ControllerState().Phase != PhaseSlowStart {
		t.Fatal("left slow start on a 15 ms increase")
	}
	f.round(631 * ms)
	if f.s.ControllerState().Phase != PhaseConservativeSlowStart {
		t.Fatal("stayed in slow start on a 16 ms increase")
	}
}

// A loss during CSS ends HyStart++: the usual reduction.
func TestHyStartLossInCSS(t *testing.T) {
	f := hystartSender(t)
	f.round(100 * ms)
	f.round(100 * ms)
	f.round(120 * ms)
	w := f.s.CongestionWindow()
	first := f.pn
	sendN(t, f.s, f.now, first, 10)
	f.pn += 10
	ack(t, f.s, f.now+120*ms, SpaceApplication, 0, rng(first+1, first+9, 0, first-1))
	wantWindow(t, f.s, w/2, w/2, PhaseRecovery)
}

// A queue that builds within a round shows in the round's later samples
// while its minimum, from its first packets, is unchanged: eight samples
// in a row above the threshold move slow start to CSS in that round.
func TestHyStartTrendWithinARound(t *testing.T) {
	f := hystartSender(t)
	f.round(100 * ms)
	f.round(100 * ms) // -> 48000: 40 packets next
	n := uint64(f.s.CongestionWindow() / seg)
	first := f.pn
	sendN(t, f.s, f.now, first, n)
	f.pn += n
	for i := range n {
		rtt := 100 * ms // the first half of the round sees no queue
		if i >= n/2 {
			rtt = 100*ms + time.Duration(i-n/2+1)*2*ms // then it grows
		}
		ack(t, f.s, f.now+rtt+time.Duration(i)*ackSpacing, SpaceApplication, 0, rng(0, first+i))
		phase := f.s.ControllerState().Phase
		// The 8 most recent samples all reach 112.5 ms from the
		// 13th rising one (at 126 ms) on, counting back 8 of them.
		rising := int64(i) - int64(n/2) + 1
		switch {
		case rising < 14 && phase != PhaseSlowStart:
			t.Fatalf("sample %d (%v): phase %v, want slow start", i, rtt, phase)
		case rising >= 14 && phase != PhaseConservativeSlowStart:
			t.Fatalf("sample %d (%v): phase %v, want CSS", i, rtt, phase)
		}
	}
}
