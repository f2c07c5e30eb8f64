package core

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/fec"
)

// orderRun feeds a datagramOrder sources with one datagram each (the
// datagram is the sequence number's byte) and collects what it delivers.
type orderRun struct {
	o   datagramOrder
	got []byte
}

func newOrderRun(window uint64) *orderRun { return &orderRun{o: datagramOrder{window: window}} }

// source processes source seq at now as the frame loop does: the source
// first, then its datagram, then the release.
func (r *orderRun) source(now time.Duration, seq uint64, hold time.Duration) {
	r.o.onSource(now, seq, hold)
	d := []byte{byte(seq)}
	if r.o.holds() {
		r.o.hold(d)
	} else {
		r.got = append(r.got, d...)
	}
	r.release(now)
}

func (r *orderRun) release(now time.Duration) {
	r.o.release(now, func(b []byte) { r.got = append(r.got, b...) })
}

func (r *orderRun) want(t *testing.T, want ...byte) {
	t.Helper()
	if !slices.Equal(r.got, want) {
		t.Fatalf("delivered %v, want %v", r.got, want)
	}
}

// TestDatagramOrderRebuiltFirst: the datagrams behind a missing source
// wait for its rebuild and follow it, in sequence order, also when two
// gaps are rebuilt in the opposite order.
func TestDatagramOrderRebuiltFirst(t *testing.T) {
	const hold = 10 * time.Millisecond
	r := newOrderRun(64)
	for _, seq := range []uint64{0, 1, 3, 4, 6} {
		r.source(time.Millisecond, seq, hold)
	}
	r.want(t, 0, 1)
	if at, ok := r.o.timer(); !ok || at != time.Millisecond+hold {
		t.Fatalf("timer %v %v, want %v", at, ok, time.Millisecond+hold)
	}
	r.source(2*time.Millisecond, 5, hold) // the second gap first
	r.want(t, 0, 1)
	r.source(2*time.Millisecond, 2, hold)
	r.want(t, 0, 1, 2, 3, 4, 5, 6)
	if _, ok := r.o.timer(); ok || len(r.o.held) != 0 || r.o.reordered != 4 || r.o.givenUp != 0 {
		t.Errorf("timer %v, %d held, %d reordered, %d given up: want none, 0, 4, 0", ok, len(r.o.held), r.o.reordered, r.o.givenUp)
	}
}

// TestDatagramOrderGivesUp: a gap not filled within the hold is given up
// at its deadline, and a late arrival afterwards goes straight through.
func TestDatagramOrderGivesUp(t *testing.T) {
	const hold = 10 * time.Millisecond
	r := newOrderRun(64)
	r.source(0, 0, hold)
	r.source(time.Millisecond, 2, hold)
	r.source(5*time.Millisecond, 4, hold)
	r.release(time.Millisecond + hold - 1)
	r.want(t, 0)
	r.release(time.Millisecond + hold)
	r.want(t, 0, 2) // 3's gap was found later: 4 still waits
	if at, ok := r.o.timer(); !ok || at != 5*time.Millisecond+hold {
		t.Fatalf("timer %v %v, want %v", at, ok, 5*time.Millisecond+hold)
	}
	r.source(12*time.Millisecond, 1, hold) // after its gap was given up
	r.want(t, 0, 2, 1)
	r.release(5*time.Millisecond + hold)
	r.want(t, 0, 2, 1, 4)
	if r.o.givenUp != 2 {
		t.Errorf("%d given up, want 2", r.o.givenUp)
	}
}

// TestDatagramOrderLongGap: datagrams do not wait behind a run of missing
// sources longer than any repairs on loss rebuild; they still wait behind
// a shorter one.
func TestDatagramOrderLongGap(t *testing.T) {
	const hold = 10 * time.Millisecond
	r := newOrderRun(1024)
	r.source(0, 0, hold)
	long := uint64(orderMaxRepairableGap + 2)
	r.source(time.Millisecond, long, hold)
	r.release(time.Millisecond)
	r.want(t, 0, byte(long))
	short := long + orderMaxRepairableGap + 1
	r.source(2*time.Millisecond, short, hold)
	r.release(2 * time.Millisecond)
	r.want(t, 0, byte(long))
	r.release(2*time.Millisecond + hold)
	r.want(t, 0, byte(long), byte(short))
}

// TestDatagramOrderWindow: datagrams never wait for a source older than
// the window behind the newest, nor more of them than the window holds.
func TestDatagramOrderWindow(t *testing.T) {
	const hold = time.Second
	r := newOrderRun(4)
	r.source(0, 0, hold)
	for seq := uint64(2); seq <= 4; seq++ {
		r.source(0, seq, hold)
	}
	r.want(t, 0)
	r.source(0, 5, hold) // 1 is now more than 4 behind the newest
	r.want(t, 0, 2, 3, 4, 5)
	// Sources never rebuilt and no datagram waiting: the gaps are
	// forgotten, not kept.
	r = newOrderRun(4)
	for seq := uint64(0); seq < 1000; seq += 2 {
		r.source(time.Duration(seq)*time.Millisecond, seq, hold)
	}
	if r.o.gaps.len() > 4 || r.o.arrived.count() > 4 {
		t.Errorf("%d gaps and %d spans kept, want at most 4", r.o.gaps.len(), r.o.arrived.count())
	}
}

// TestDatagramOrderConn: a packet of a burst of datagrams is lost and
// rebuilt by the repair that follows the burst; the client delivers the
// burst in the order it was sent, the rebuilt datagram in its place. With
// NoDatagramOrder it delivers the rebuilt one last.
func TestDatagramOrderConn(t *testing.T) {
	for _, off := range []bool{false, true} {
		p := newLossRepairPair(t, func(_ sentKind, source int) bool { return source == 2 })
		p.client.fec.cfg.NoDatagramOrder = off
		p.sendAndSettle(t, 8)
		p.checkAllDelivered(t, 8)
		var order []byte
		for _, b := range p.got {
			order = append(order, b[0])
		}
		want := []byte{0, 1, 2, 3, 4, 5, 6, 7}
		if off {
			want = []byte{0, 1, 3, 4, 5, 6, 7, 2}
		}
		if !slices.Equal(order, want) {
			t.Errorf("NoDatagramOrder %v: delivered %v, want %v", off, order, want)
		}
		o := &p.client.fec.recv.order
		if c := p.client.Stats().FEC; c.SymbolsRecovered != 1 || len(o.held) != 0 {
			t.Errorf("NoDatagramOrder %v: %d rebuilt, %d held: want 1, 0", off, c.SymbolsRecovered, len(o.held))
		}
	}
}

// TestDatagramOrderHeldInRecycledBuffers: the datagrams held behind a
// missing source wait in buffers the application gave back, as those
// delivered at once arrive in them, and come out with their own bytes
// and in order once the missing one is rebuilt.
func TestDatagramOrderHeldInRecycledBuffers(t *testing.T) {
	p := newLossRepairPair(t, func(_ sentKind, source int) bool { return source == 2 })
	spares := make([][]byte, 8)
	for i := range spares {
		spares[i] = make([]byte, 0, 1200)
		p.client.RecycleDatagram(spares[i])
	}
	p.sendAndSettle(t, 8)
	p.checkAllDelivered(t, 8)
	if held := p.client.fec.recv.order.reordered; held != 5 {
		t.Fatalf("%d datagrams held, want the 5 behind the lost one", held)
	}
	for i, b := range p.got {
		if b[0] != byte(i) || !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, 1000)) {
			t.Fatalf("datagram %d delivered as %d with changed bytes", i, b[0])
		}
		if !slices.ContainsFunc(spares, func(s []byte) bool { return &s[:1][0] == &b[:1][0] }) {
			t.Errorf("datagram %d is not in a buffer the application gave back", i)
		}
	}
}

// TestDatagramOrderConnGivesUp: a datagram lost with no repair to rebuild
// it holds the ones behind it for DatagramHold, no longer.
func TestDatagramOrderConnGivesUp(t *testing.T) {
	const hold = 20 * time.Millisecond
	p := newLossRepairPair(t, func(kind sentKind, source int) bool {
		return source == 2 || kind == sentOwedRepair || kind == sentLossRepair || kind == sentProbeRepair
	})
	p.server.fec.cfg.NoLossRepair = true
	p.client.fec.cfg.DatagramHold = hold
	var at []time.Duration
	app := p.clientApp
	p.clientApp = func(now time.Duration, c *Conn) {
		n := len(p.got)
		app(now, c)
		for range len(p.got) - n {
			at = append(at, now)
		}
	}
	start := p.now
	p.sendAndSettle(t, 6)
	var order []byte
	for _, b := range p.got {
		order = append(order, b[0])
	}
	if !slices.Equal(order, []byte{0, 1, 3, 4, 5}) {
		t.Fatalf("delivered %v, want 0, 1, 3, 4, 5", order)
	}
	// The burst arrives together, half a round trip after it was sent:
	// 0 and 1 at once, the rest a hold later.
	if wait := at[2] - at[1]; wait != hold {
		t.Errorf("3 delivered %v after 1 (sent at %v, 1 delivered at %v), want %v", wait, start, at[1], hold)
	}
	if o := &p.client.fec.recv.order; o.givenUp != 1 || len(o.held) != 0 {
		t.Errorf("%d sources given up, %d held: want 1, 0", o.givenUp, len(o.held))
	}
}

// TestFECReactionNarrowsOnRebuilt: a lost datagram is rebuilt and the
// peer reports it. The reaction to its loss then stops widening the
// window: the repairs over the next, loss-free stretch cover the
// controller's planned window rather than reaching back over the rebuilt
// source (before, until the next report, up to MaxWindow sources each).
func TestFECReactionNarrowsOnRebuilt(t *testing.T) {
	p := newLossRepairPair(t, func(_ sentKind, source int) bool { return source == 2 })
	p.sendAndSettle(t, 8)
	p.sendAndSettle(t, 120)
	if len(p.got) != 128 {
		t.Fatalf("%d datagrams delivered, want 128", len(p.got))
	}
	ctrl := p.server.fec.send.ctrl.(*fec.AdaptiveController)
	if c := p.client.Stats().FEC; c.SymbolsRecovered != 1 {
		t.Fatalf("%d rebuilt, want 1", c.SymbolsRecovered)
	}
	plan := *ctrl
	plan.OnMissing(0, false) // a copy without a reaction: the planned window
	if w := ctrl.Window(); w != plan.Window() || w >= 126 {
		t.Errorf("window %d after the rebuilt source was reported, want the planned %d (126 reaches it)", w, plan.Window())
	}
}
