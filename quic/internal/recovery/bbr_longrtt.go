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
	slot := &b.bwFilter[b.cycleCount%2]
	*slot = max(*slot, rate)
	b.maxBw = max(b.bwFilter[0], b.bwFilter[1])
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
