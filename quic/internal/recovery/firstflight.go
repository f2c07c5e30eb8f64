package recovery

import "time"

// firstFlightMinPackets is the number of packets a rate sample of the
// first flight must span (after the second ACK's): six transmission times
// at the bottleneck. The burst is the pacer's bucket of ten packets
// (PacingConfig.BurstPackets), and the first two ACKs take two to four of
// them.
const firstFlightMinPackets = 6

// flightState is where the first-flight measurement is.
type flightState uint8

const (
	// flightOff: disabled, or done (measured, or given up).
	flightOff flightState = iota
	// flightArmed: the initial window is scaled; the next packet sent in
	// flight starts the flight.
	flightArmed
	// flightSending: the flight is leaving as a burst; no ACK of it yet.
	flightSending
	// flightMeasuring: the flight's ACKs are arriving.
	flightMeasuring
)

// firstFlight measures the bottleneck's rate from the ACKs of the first
// flight of the long-RTT slow start (the jump, which LongRTTConfig.NoJump
// turns off), so that the window can jump to that rate's bandwidth-delay
// product one round trip after the data began, instead of after the three
// or four round trips of (1+f)-fold growth that the delay exit (longRTT)
// needs.
//
// The flight starts with the pacer's burst (ten packets, the initial
// window RFC 9002 section 7.7 allows as a burst). The bottleneck sends its
// packets one transmission time apart, and the receiver's ACKs come back
// with that spacing, so the bytes the burst's ACKs acknowledge over the
// time they took to arrive are the bottleneck's rate: packet-train
// dispersion. The rate is taken over the longest span, from the second ACK
// to the last one of the burst, or from the first ACK when that span holds
// too few packets (a lost ACK). The first ACK is the first packet the
// sender receives after a round trip of silence, and a sender (or a relay
// on the way) that was asleep wakes up late for it: over the emulator it
// came 0.3-0.4 ms late, which read a 50 Mbit/s bottleneck as 60. Timing
// noise on the way back (a relay that forwards ACKs in clumps, a sender
// that reads them in batches) shortens some spans between ACKs and
// lengthens others, and the largest of the shorter spans' rates would
// read it as a faster bottleneck. Each ACK's time is less the ack delay it
// reports, so that an ACK the receiver held for its ack timer (an odd
// packet at the end of the burst) does not lower the rate.
//
// The jump only raises the window: a rate below what the window already
// sends is either a slow bottleneck, which the delay exit finds a few
// round trips later as before, or a measurement that path jitter spread
// out, which must not cut the window. Guards, each of which leaves the
// slow start as it was:
//   - The flight's packets must have left at least twice as fast as they
//     came back: a flight the application wrote slowly measures the
//     application.
//   - Every RTT sample of the flight must lie within the burst's own
//     queue (its bytes at the measured rate) plus HyStart++'s threshold
//     above the minimum RTT. Path jitter (in-flight Wi-Fi) bunches ACKs:
//     when the first ones come late and the rest right behind them, the
//     spacing reads as a rate far above the bottleneck's, and the late
//     samples show it.
//
// Over a bottleneck that other flows share, the dispersion lies between
// the free share and the capacity; a jump to more than the share
// overshoots, and the loss response is then the one any slow start
// overshoot gets.
type firstFlight struct {
	state flightState
	// start is when the flight's first packet left; end is when its first
	// ACK arrived: packets sent from then on are not part of it.
	start, end time.Duration
	// sent is the flight's in-flight bytes, and packets their count.
	sent    int64
	packets int64
	// refs are the first two ACKs (nRefs of them so far), where the spans
	// start; before is the delivered count before the flight.
	refs   [2]ackRef
	nRefs  int
	before int64
	// firstSent and lastSent bound the send times of the flight's
	// packets acknowledged after the first ACK (sentAny: there are any;
	// the first ACK's packets may include one sent before the burst,
	// such as the one with HANDSHAKE_DONE, when the application took a
	// moment to answer).
	firstSent, lastSent time.Duration
	sentAny             bool
	// lastFlight is when the flight's last in-flight packet left.
	lastFlight time.Duration
	// rate is the sample over the longest span (bytes per second), from
	// refs[ref]; upTo is the flight's bytes acknowledged at its end;
	// maxRTT is the largest RTT sample of the flight, less the ack delay.
	rate   uint64
	ref    int
	upTo   int64
	maxRTT time.Duration
}

// ackRef is an ACK a span starts at: when it arrived, less its ack delay,
// and the delivered count after it.
type ackRef struct {
	at        time.Duration
	delivered int64
}

// arm starts waiting for the flight, when the initial window is scaled.
func (f *firstFlight) arm() { f.state = flightArmed }

// stop ends the measurement: it is done, or a congestion event came
// first.
func (f *firstFlight) stop() { f.state = flightOff }

// onSent counts an in-flight packet sent at now.
func (f *firstFlight) onSent(now time.Duration, bytes int) {
	switch f.state {
	case flightArmed:
		f.state, f.start = flightSending, now
		f.sent, f.packets = int64(bytes), 1
	case flightSending:
		f.sent += int64(bytes)
		f.packets++
	default:
		return
	}
	f.lastFlight = now
}

// onAck takes an ACK. It reports done when the flight's ACKs are all in
// (or a packet sent after it was acknowledged); rate is then the measured
// rate, or zero when a guard failed or nothing was measured.
func (f *firstFlight) onAck(now time.Duration, ev *AckEvent, threshold time.Duration) (rate uint64, done bool) {
	switch f.state {
	case flightSending:
		if !f.acksFlight(ev) {
			return 0, false
		}
		f.state, f.end = flightMeasuring, now
		f.before = ev.Delivered - ev.AckedBytes
		f.refs[0], f.nRefs = ackRef{now - ackDelay(ev), ev.Delivered}, 1
		f.noteRTT(ev)
		return 0, false
	case flightMeasuring:
	default:
		return 0, false
	}
	after := false
	for i := range ev.Acked {
		p := &ev.Acked[i]
		if !p.InFlight {
			// An ACK-only packet sent after the flight: the ACK's
			// delay is that packet's, and the receiver may have
			// held the flight's last packet for its ack timer
			// until it came. Over geo-lossy (250 Mbit/s) such an
			// ACK, 25 ms after the burst's, read the bottleneck
			// as 26 Mbit/s, and BBR's Startup took four round
			// trips more (bench download --virtual, seed 1: 7.0 s
			// for 100 MB with FEC).
			after = after || p.TimeSent > f.lastFlight
			continue
		}
		if p.TimeSent >= f.end {
			after = true
			continue
		}
		if !f.sentAny {
			f.firstSent, f.lastSent, f.sentAny = p.TimeSent, p.TimeSent, true
		}
		f.firstSent = min(f.firstSent, p.TimeSent)
		f.lastSent = max(f.lastSent, p.TimeSent)
	}
	burstOver := false
	if ev.AckedBytes > 0 && !after {
		f.noteRTT(ev)
		burstOver = !f.sample(now-ackDelay(ev), ev.Delivered) && f.rate > 0
		if f.nRefs == 1 {
			f.refs[1], f.nRefs = ackRef{now - ackDelay(ev), ev.Delivered}, 2
		}
	}
	// Done at the first ACK past the burst (the packets after it were
	// paced and measure the pacer), or when the flight is all in.
	if !after && !burstOver && !f.allIn(ev.Delivered) {
		return 0, false
	}
	f.stop()
	return f.verdict(ev.RTT.MinRTT(), threshold), true
}

// allIn reports whether the flight's bytes are acknowledged but for the
// two packets one ACK of the receiver covers (RFC 9000 section 13.2.2):
// when the return link loses the flight's last ACK, the next one comes a
// round trip later, with packets sent after the flight. Over geo-lossy
// (1% loss on the return link) that held BBR's jump from 1.51 s to 2.11 s
// (100 MB with FEC, seed 2, run 2: 6.07 s).
func (f *firstFlight) allIn(delivered int64) bool {
	perPacket := (f.sent + f.packets - 1) / max(f.packets, 1)
	return f.sent-(delivered-f.before) <= 2*perPacket
}

// acksFlight reports whether an ACK acknowledges a packet of the flight.
func (f *firstFlight) acksFlight(ev *AckEvent) bool {
	for i := range ev.Acked {
		if p := &ev.Acked[i]; p.InFlight && p.TimeSent >= f.start {
			return true
		}
	}
	return false
}

// ackDelay is the delay the peer reported for an ACK that gave an RTT
// sample, as far as the RTT estimator took it (RFC 9002 section 5.3).
func ackDelay(ev *AckEvent) time.Duration {
	if !ev.HasRTTSample {
		return 0
	}
	return ev.RTT.LatestRTT() - ev.RTT.AdjustedRTT()
}

func (f *firstFlight) noteRTT(ev *AckEvent) {
	if ev.HasRTTSample {
		f.maxRTT = max(f.maxRTT, ev.RTT.AdjustedRTT())
	}
}

// sample takes the rate over the span from the second ACK to this one,
// or from the first when that span is too short, if the packets it covers
// left at least twice as fast as their ACKs came back. It reports whether
// they did.
func (f *firstFlight) sample(at time.Duration, delivered int64) bool {
	if 2*(f.lastSent-f.firstSent) > at-f.refs[0].at {
		return false
	}
	for i := f.nRefs - 1; i >= 0; i-- {
		r := f.refs[i]
		span, bytes := at-r.at, delivered-r.delivered
		if span <= 0 || bytes <= 0 || bytes*f.packets < firstFlightMinPackets*f.sent {
			continue
		}
		if i >= f.ref || f.rate == 0 {
			f.rate = mulDivSat(uint64(bytes), uint64(time.Second), uint64(span))
			f.ref, f.upTo = i, delivered-f.before
		}
		break
	}
	return true
}

// verdict applies the jitter guard to the measured rate.
func (f *firstFlight) verdict(minRTT, threshold time.Duration) uint64 {
	if f.rate == 0 || minRTT <= 0 {
		return 0
	}
	// The burst queues behind itself: its last packet waits for the
	// others, the bytes before it at the rate.
	queue := time.Duration(mulDivSat(uint64(f.upTo), uint64(time.Second), f.rate))
	if f.maxRTT > minRTT+queue+threshold {
		return 0
	}
	return f.rate
}
