package recovery

import "time"

// BBR on a long round trip. The draft's Startup doubles the delivery rate
// each round trip from the initial window: on a 600 ms GEO path that fills
// 250 Mbit/s in about eleven round trips, 6.6 s. As for CUBIC and NewReno
// (LongRTTConfig, longrtt.go), satquic departs from the draft on paths
// whose minimum RTT is LongRTTConfig.MinRTT or more, and only in the first
// Startup: the first RTT sample raises the window to f initial windows (f
// = min(minRTT/ReferenceRTT, MaxFactor)), and the ACKs of that first
// flight measure the bottleneck's rate by packet-train dispersion
// (firstFlight), which enters the bandwidth filter as a sample, and the
// window jumps to that rate's bandwidth-delay product: Startup's window
// grows by what is acknowledged, one doubling per round trip, which would
// otherwise still need eight round trips to fill the path at the measured
// rate. Startup then paces at its gain over the measured rate, its window
// (twice the estimated bandwidth-delay product) bounds the queue it
// builds, and its exit and Drain are the draft's.

// longRTTStartup applies the departure when the first RTT sample shows a
// long path.
func (b *bbr) longRTTStartup(ev *AckEvent) {
	if b.lrDone || b.state != BBRStartup || ev.RTT == nil || !ev.RTT.HasSample() {
		return
	}
	b.lrDone = true
	f := b.lr.factor(ev.RTT)
	if f <= 1 {
		return
	}
	if iw := b.lr.initialWindow(b.mds, f); iw > int64(b.cwnd) {
		b.initialCwnd = int(min(iw, int64(b.maxWindow)))
		b.cwnd = b.initialCwnd
	}
}

// firstFlightSample feeds the first flight's measured rate to the
// bandwidth filter.
func (b *bbr) firstFlightSample(now time.Duration, ev *AckEvent) {
	if ev.RTT == nil {
		return
	}
	rate, done := b.lr.flight.onAck(now, ev, b.lr.threshold(ev.RTT.MinRTT()))
	if !done || rate == 0 {
		return
	}
	b.addBwSample(rate)
	b.countFirstFlightRound()
	if b.minRTT > 0 {
		b.cwnd = int(min(max(int64(b.cwnd), bytesIn(rate, b.minRTT)), int64(b.maxWindow)))
	}
}

// stopFirstFlightOnLoss gives up the first flight's measurement when
// losses show congestion: persistent congestion, or as many loss events
// in the round as end Startup (StartupFullLossCount, section 5.3.1.3).
// CUBIC's slow start gives it up at the first loss (window.go), but BBR
// does not take a loss below its threshold for congestion, and the ACKs
// of the rest of the flight still show the bottleneck's spacing. Over
// geo-lossy (1% random loss each way) one flight in ten lost a packet of
// its burst, and Startup then doubled from the initial window for eleven
// round trips more (bench download --virtual, 100 MB without FEC, seed 1,
// run 2: 10.6 s).
func (b *bbr) stopFirstFlightOnLoss(ev *CongestionEvent) {
	if ev.Persistent || b.round.lossEvents >= b.cfg.StartupFullLossCount {
		b.lr.flight.stop()
	}
}

// countFirstFlightRound counts the first flight's measurement as a round
// trip of Startup's full-pipe estimator (section 5.3.1.2): the bandwidth
// it measured becomes full_bw, and two more round trips in which max_bw
// grows by less than FullBwThresh end Startup, where the draft counts
// three from the next round's sample. The first flight's rate is a
// measurement of the bottleneck by itself (packet-train dispersion), and
// the two round trips that follow, the first of the jump's data and the
// first paced at Startup's gain over the measured rate, confirm it; a
// rate that grows by a quarter restarts the count, as in the draft.
// Startup's window, twice the bandwidth-delay product, fills a buffer of
// one bandwidth-delay product within its third round trip at the rate:
// over geo-lossy the draft's count let it overflow, 1200 packets lost at
// once, whose retransmissions then waited out a 1.2 s round trip (100 MB
// with FEC, seed 1, run 1: 5.68 s).
func (b *bbr) countFirstFlightRound() {
	if b.fullBwReached || b.state != BBRStartup {
		return
	}
	b.fullBw = b.maxBw
	b.fullBwCount = max(b.cfg.FullBwCount-2, 0)
}
