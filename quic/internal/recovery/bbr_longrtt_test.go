package recovery

import (
	"testing"
	"time"
)

// BBR's first flight over a 100 ms path whose bottleneck passes a packet
// every 192 us (6.25 MB/s): the burst's fifth packet is lost, and the
// loss is declared three packets later, while the flight's ACKs are
// still arriving. One loss event is below what ends Startup
// (StartupFullLossCount), so the measurement goes on: the ACKs after the
// loss still come a bottleneck's transmission time apart, and the rate
// they give (a packet short of the flight's bytes, 5.47 MB/s) enters
// the bandwidth filter and the window jumps to its bandwidth-delay
// product, where giving up left Startup to double from the initial
// window.
func TestBBRFirstFlightSurvivesOneLoss(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Algorithm = BBR
	cfg.BBR.Seed = 1
	p := newLRPath(t, cfg)
	p.burst(0, 1)
	p.ackUpTo(flightRTT, 0)
	b := p.s.cc.(*bbr)
	if b.lr.flight.state != flightArmed {
		t.Fatalf("first flight %v after the first RTT sample, want armed", b.lr.flight.state)
	}
	const gap = 192 * time.Microsecond
	first := p.burst(150*ms, 10)
	paced := p.burst(152*ms, 1)
	lost := first + 4
	arrive := func(pn uint64) time.Duration { return 150*ms + flightRTT + time.Duration(pn-first+1)*gap }
	for pn := first + 1; pn < first+10; pn += 2 {
		ranges := rng(0, pn)
		if pn > lost {
			ranges = rng(lost+1, pn, 0, lost-1)
		}
		ack(t, p.s, arrive(pn), SpaceApplication, 0, ranges)
	}
	if p.s.Stats().PacketsLost != 1 {
		t.Fatalf("%d packets lost, want the burst's fifth", p.s.Stats().PacketsLost)
	}
	ack(t, p.s, 152*ms+flightRTT+11*gap, SpaceApplication, 0, rng(lost+1, paced, 0, lost-1))
	const want = 5_468_750
	if b.maxBw != want {
		t.Fatalf("max_bw %d after the flight, want %d", b.maxBw, want)
	}
	if bdp := bytesIn(want, b.minRTT); int64(b.cwnd) < bdp {
		t.Fatalf("window %d, want at least the measured BDP %d", b.cwnd, bdp)
	}
}
