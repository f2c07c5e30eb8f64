package recovery

import (
	"testing"
	"time"
)

// flightPath is a 100 ms path (growth factor 2, a scaled initial window of
// 20 packets) behind a bottleneck that passes a packet every gap: the
// first RTT sample arrives at 100 ms, the first flight leaves at 150 ms,
// and the receiver acknowledges every other packet as it arrives.
type flightPath struct {
	*lrPath
	gap time.Duration
}

const flightRTT = 100 * ms

func newFlightPath(t *testing.T, gap time.Duration) *flightPath {
	p := &flightPath{lrPath: newLRPath(t, DefaultConfig()), gap: gap}
	p.burst(0, 1)
	p.ackUpTo(flightRTT, 0)
	if got := p.s.CongestionWindow(); got != 20*seg+2*seg {
		t.Fatalf("window %d after the first sample, want the scaled 20 packets and 2 x 1 for the ACK", got)
	}
	return p
}

// sendFlight sends the flight: burst packets at 150 ms, then one packet
// every spread.
func (p *flightPath) sendFlight(burst, paced uint64, spread time.Duration) (first uint64) {
	first = p.burst(150*ms, burst)
	for i := range paced {
		p.burst(150*ms+time.Duration(i+1)*spread, 1)
	}
	return first
}

// ackPair acknowledges packets up to pn, whose bottleneck position from
// the flight's first packet is pos, with an RTT sample raised by extra.
func (p *flightPath) ackPair(first, pn uint64, extra time.Duration) *Result {
	pos := time.Duration(pn - first + 1)
	return p.ackUpTo(150*ms+flightRTT+pos*p.gap+extra, pn)
}

// ackBurst acknowledges the burst of a flight sent by sendFlight(10, ...),
// every other packet, from the ACK of packet from on.
func (p *flightPath) ackBurst(first, from uint64) {
	p.t.Helper()
	for pn := from; pn < first+10; pn += 2 {
		p.ackPair(first, pn, 0)
		if st := p.s.ControllerState(); st.Phase != PhaseSlowStart {
			p.t.Fatalf("left slow start at the ACK of %d: %+v", pn, st)
		}
	}
}

// ackFirstPaced acknowledges the first paced packet of a flight sent by
// sendFlight(10, 10, 2*ms): it left 2 ms after the burst, and its ACK
// shows the pacer.
func (p *flightPath) ackFirstPaced(first uint64) {
	p.t.Helper()
	p.ackUpTo(150*ms+flightRTT+2*ms+11*p.gap, first+10)
}

// flightRate is the rate of flightPath's bottleneck at a 192 us gap.
const flightRate = 6_250_000

// wantJump checks the state after a jump to flightRate: window and
// ssthresh 1.25 x 6.25 MB/s x 100 ms = 781,250 bytes, congestion
// avoidance, no reduction, and pacing at the measured rate.
func (p *flightPath) wantJump() {
	p.t.Helper()
	want := int(flightRate * 0.1 * longRTTExitHeadroom)
	st := p.s.ControllerState()
	if st.Phase != PhaseCongestionAvoidance || st.Window != want || st.SSThresh != want || st.Reductions != 0 {
		p.t.Fatalf("state %+v after the flight, want window and ssthresh %d, no reduction", st, want)
	}
	if got := p.s.PacingRate(); got != flightRate {
		p.t.Fatalf("pacing %d after the jump, want the measured %d", got, flightRate)
	}
}

// A 10-packet burst through 50 Mbit/s (a 1200-byte packet every 192 us):
// the ACKs of packets 1-2 ... 9-10 come 384 us apart and measure the
// rate, 6.25 MB/s. At the first ACK of a paced packet the window jumps to
// 1.25 x 6.25 MB/s x 100 ms = 781,250 bytes, slow start ends, and the
// sender paces at the measured rate for a round trip.
func TestFirstFlightJump(t *testing.T) {
	p := newFlightPath(t, 192*time.Microsecond)
	first := p.sendFlight(10, 10, 2*ms)
	p.ackBurst(first, first+1)
	p.ackFirstPaced(first)
	p.wantJump()
}

// The first ACK of the burst came 0.4 ms late (a sender, or a relay,
// that slept through the silent round trip wakes up late for it): the
// spans start at the second ACK, so the rate is still exactly 6.25 MB/s,
// where a span from the first would read 6.9 MB/s.
func TestFirstFlightLateFirstAck(t *testing.T) {
	p := newFlightPath(t, 192*time.Microsecond)
	first := p.sendFlight(10, 10, 2*ms)
	p.ackPair(first, first+1, 400*time.Microsecond)
	p.ackBurst(first, first+3)
	p.ackFirstPaced(first)
	p.wantJump()
}

// A packet that left 1 ms before the burst (HANDSHAKE_DONE, while the
// application prepared its answer) starts the flight, and the first ACK
// acknowledges it with the burst's first packets. The burst still left
// faster than it came back, and the window jumps.
func TestFirstFlightEarlierPacketStillJumps(t *testing.T) {
	p := newFlightPath(t, 192*time.Microsecond)
	p.burst(149*ms, 1)
	first := p.sendFlight(10, 10, 2*ms)
	p.ackBurst(first, first+1)
	p.ackFirstPaced(first)
	p.wantJump()
}

// A flight through a bottleneck slower than its scaled window (1 Mbit/s,
// a packet every 9.6 ms: 12.5 kB per round trip) measures less than the
// window sends: no jump, which only raises; the delay exit finds the
// bottleneck as before.
func TestFirstFlightSlowBottleneckNoJump(t *testing.T) {
	p := newFlightPath(t, 9600*time.Microsecond)
	first := p.sendFlight(10, 0, 0)
	p.ackBurst(first, first+1)
	p.wantSlowStart()
}

// Jitter that delays the head of the flight: the first two ACKs come
// 40 ms late and the rest right behind them, 10 us apart. Their spacing
// reads as a rate hundreds of times the bottleneck's; the late samples
// lie beyond the burst's queue at that rate plus the 12.5 ms threshold,
// so there is no jump.
func TestFirstFlightLateHeadNoJump(t *testing.T) {
	p := newFlightPath(t, 192*time.Microsecond)
	first := p.sendFlight(10, 10, 10*ms)
	late := 150*ms + flightRTT + 40*ms
	p.ackBurstLate(first, first, late, 5*time.Microsecond)
	p.ackPacedRest(first, late)
	p.wantSlowStart()
}

// Jitter: the third ACK of the flight came 40 ms late, and the ACKs after
// it bunched behind it. Their spacing measured the jitter, not the
// bottleneck: 270 kB/s instead of 6.25 MB/s, less than the window sends,
// so there is no jump (which would cut the window), and slow start goes
// on.
func TestFirstFlightJitterKeepsSlowStart(t *testing.T) {
	p := newFlightPath(t, 192*time.Microsecond)
	first := p.sendFlight(10, 10, 10*ms)
	late := 150*ms + flightRTT + 40*ms
	p.ackBurstLate(first, first+5, late, time.Microsecond)
	p.ackPacedRest(first, late)
	p.wantSlowStart()
}

// ackBurstLate acknowledges the burst of a flight sent by sendFlight(10,
// ...), every other packet: on time before packet lateFrom, and from it on
// bunched behind a late ACK, at late plus step per packet.
func (p *flightPath) ackBurstLate(first, lateFrom uint64, late, step time.Duration) {
	p.t.Helper()
	for pn := first + 1; pn < first+10; pn += 2 {
		if pn < lateFrom {
			p.ackPair(first, pn, 0)
			continue
		}
		p.ackUpTo(late+time.Duration(pn-first)*step, pn)
	}
}

// ackPacedRest acknowledges the ten paced packets of a flight sent by
// sendFlight(10, 10, 10*ms), one by one, no earlier than late: the
// order-keeping path holds them behind a late ACK.
func (p *flightPath) ackPacedRest(first uint64, late time.Duration) {
	p.t.Helper()
	for pn := first + 10; pn < first+20; pn++ {
		k := time.Duration(pn - first - 9)
		p.ackUpTo(max(late+100*time.Microsecond+k*10*time.Microsecond, 150*ms+flightRTT+k*10*ms+p.gap), pn)
	}
}

func (p *flightPath) wantSlowStart() {
	p.t.Helper()
	if st := p.s.ControllerState(); st.Phase != PhaseSlowStart || st.SSThresh != InfiniteSSThresh || st.Reductions != 0 {
		p.t.Fatalf("state %+v, want slow start", st)
	}
}

// A flight the application wrote slowly (a packet every 2 ms, slower than
// the bottleneck) measures the application: no sample passes, and slow
// start goes on.
func TestFirstFlightSlowWriterKeepsSlowStart(t *testing.T) {
	p := newFlightPath(t, 192*time.Microsecond)
	first := p.sendFlight(1, 19, 2*ms)
	for pn := first + 1; pn < first+20; pn += 2 {
		p.ackUpTo(150*ms+flightRTT+time.Duration(pn-first)*2*ms+p.gap, pn)
	}
	p.wantSlowStart()
}

// With Jump off, the same burst leaves the window to (1+f)-fold growth.
func TestFirstFlightJumpOff(t *testing.T) {
	cfg := DefaultConfig()
	cfg.LongRTT.NoJump = true
	p := &flightPath{lrPath: newLRPath(t, cfg), gap: 192 * time.Microsecond}
	p.burst(0, 1)
	p.ackUpTo(flightRTT, 0)
	first := p.sendFlight(10, 10, 2*ms)
	p.ackBurst(first, first+1)
	p.ackFirstPaced(first)
	p.wantSlowStart()
}

// The burst's last odd packet is held by the receiver for its ack timer:
// the flight is all in but for what one ACK covers, and the window jumps
// at the ACK of the last pair, at the 6.25 MB/s the pairs measured.
func TestFirstFlightHeldLastPacketStillJumps(t *testing.T) {
	p := newFlightPath(t, 192*time.Microsecond)
	first := p.sendFlight(11, 0, 0)
	for pn := first + 1; pn < first+9; pn += 2 {
		p.ackPair(first, pn, 0)
	}
	if st := p.s.ControllerState(); st.Phase != PhaseSlowStart {
		t.Fatalf("left slow start with three packets of the flight out: %+v", st)
	}
	p.ackPair(first, first+9, 0)
	p.wantJump()
}

// The ACK of the burst's last three packets comes 25 ms late, with an
// ACK-only packet the sender sent after the flight, whose ack delay (2 ms)
// is all the ACK reports. That ACK's time says nothing of the bottleneck:
// the rate stays the one the pairs measured, 6.25 MB/s, where a span to
// it read about 0.5 MB/s and left the window as it was.
func TestFirstFlightLateLastAckStillJumps(t *testing.T) {
	p := newFlightPath(t, 192*time.Microsecond)
	first := p.sendFlight(13, 0, 0)
	for pn := first + 1; pn < first+10; pn += 2 {
		p.ackPair(first, pn, 0)
	}
	if st := p.s.ControllerState(); st.Phase != PhaseSlowStart {
		t.Fatalf("left slow start with three packets of the flight out: %+v", st)
	}
	ackOnly := p.pn
	if err := p.s.OnPacketSent(175*ms, SentPacket{Space: SpaceApplication, Number: ackOnly, Bytes: 50, Ref: ackOnly + 1000}); err != nil {
		t.Fatal(err)
	}
	p.pn++
	ack(t, p.s, 175*ms+flightRTT+2*ms, SpaceApplication, 2*ms, rng(0, ackOnly))
	p.wantJump()
}
