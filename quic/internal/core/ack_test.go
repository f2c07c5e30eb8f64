package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

var appPolicy = ackPolicy{maxDelay: 25 * time.Millisecond, threshold: 2}

func TestAckEverySecondPacket(t *testing.T) {
	var a ackState
	a.onPacket(10*time.Millisecond, 0, true, appPolicy)
	if a.due(10 * time.Millisecond) {
		t.Fatal("ACK due after one ack-eliciting packet")
	}
	if at, ok := a.timer(); !ok || at != 35*time.Millisecond {
		t.Fatalf("delayed ACK timer %v %v, want 35ms", at, ok)
	}
	if !a.due(35 * time.Millisecond) {
		t.Fatal("ACK not due at max_ack_delay")
	}
	a.onPacket(12*time.Millisecond, 1, true, appPolicy)
	if !a.due(12 * time.Millisecond) {
		t.Fatal("ACK not due after the second ack-eliciting packet")
	}
	var f wire.AckFrame
	if !a.buildFrame(&f, 14*time.Millisecond, 3, 64) {
		t.Fatal("no ACK frame")
	}
	// Delay 2 ms since the largest arrived, in units of 8 us.
	if len(f.Ranges) != 1 || f.Ranges[0] != (wire.AckRange{Smallest: 0, Largest: 1}) || f.AckDelay != 250 {
		t.Fatalf("frame %+v", f)
	}
	a.onAckSent()
	if a.due(time.Hour) {
		t.Fatal("ACK due after it was sent")
	}
}

func TestAckImmediateOnGapAndHandshake(t *testing.T) {
	var a ackState
	a.onPacket(0, 0, true, appPolicy)
	a.onAckSent()
	a.onPacket(0, 2, true, appPolicy) // 1 is missing
	if !a.due(0) {
		t.Fatal("no immediate ACK for a gap")
	}
	a.onAckSent()
	a.onPacket(0, 1, true, appPolicy) // late
	if !a.due(0) {
		t.Fatal("no immediate ACK for a reordered packet")
	}
	var h ackState
	h.onPacket(0, 0, true, ackPolicy{immediate: true, maxDelay: time.Second, threshold: 10})
	if !h.due(0) {
		t.Fatal("handshake packet not acknowledged at once")
	}
	var n ackState
	n.onPacket(0, 0, false, appPolicy)
	if n.due(time.Hour) || n.piggyback() {
		t.Fatal("ACK due for a packet that elicits none")
	}
}

func TestAckRangesAndDuplicates(t *testing.T) {
	var a ackState
	for pn := uint64(0); pn < 100; pn += 2 {
		a.onPacket(0, pn, true, appPolicy)
	}
	if !a.isDuplicate(10) || a.isDuplicate(11) {
		t.Fatal("duplicate detection")
	}
	var f wire.AckFrame
	a.buildFrame(&f, 0, 3, 8)
	if len(f.Ranges) != 8 || f.Ranges[0].Largest != 98 || f.Ranges[7].Smallest != 84 {
		t.Fatalf("ranges %v", f.Ranges)
	}
	// Once the peer has an ACK up to 90, older ranges are not repeated.
	a.onAckAcked(90)
	a.buildFrame(&f, 0, 3, 64)
	if last := f.Ranges[len(f.Ranges)-1]; last.Largest <= 90 || len(f.Ranges) != 4 {
		t.Fatalf("ranges after the peer acknowledged up to 90: %v", f.Ranges)
	}
	// Too many ranges: the oldest are forgotten and become duplicates.
	var b ackState
	for pn := uint64(0); pn < 2*maxTrackedRanges+20; pn += 2 {
		b.onPacket(0, pn, true, appPolicy)
	}
	if b.received.count() != maxTrackedRanges || !b.isDuplicate(1) {
		t.Fatalf("%d ranges tracked, floor %d", b.received.count(), b.floor)
	}
}

func TestRecvWindowAutoTune(t *testing.T) {
	const srtt = 600 * time.Millisecond
	w := newRecvWindow(512<<10, 64<<20, 0)
	// The application reads 1 MB per round trip: the window must reach
	// windowRTTs round trips of that.
	var consumed uint64
	now := time.Duration(0)
	for range 40 {
		now += srtt / 4
		consumed += 250_000
		w.observe(consumed, now, srtt)
		if w.shouldUpdate(consumed) {
			w.update(consumed, now, srtt)
		}
		if w.limit < consumed {
			t.Fatalf("limit %d below consumed %d", w.limit, consumed)
		}
	}
	if w.window < windowRTTs*1_000_000 || w.window > 64<<20 {
		t.Fatalf("window %d, want about %d", w.window, windowRTTs*1_000_000)
	}
	// A slow reader does not grow the window.
	s := newRecvWindow(512<<10, 64<<20, 0)
	consumed, now = 0, 0
	for range 40 {
		now += 10 * srtt
		consumed += 100_000
		s.observe(consumed, now, srtt)
		if s.shouldUpdate(consumed) {
			s.update(consumed, now, srtt)
		}
	}
	if s.window != 512<<10 {
		t.Fatalf("slow reader's window grew to %d", s.window)
	}
}
