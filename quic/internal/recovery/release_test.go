package recovery

import "testing"

// TestSentRingShrink checks that a shrunk ring keeps its records in order
// in the smallest power-of-two array, drops its array when empty, and
// grows again.
func TestSentRingShrink(t *testing.T) {
	var r sentRing
	for pn := uint64(100); pn < 120; pn++ {
		r.push(pn).ref = pn
	}
	for range 17 {
		r.popFront()
	}
	r.shrink()
	if r.len() != 3 || len(r.buf) != 4 || r.front().number != 117 {
		t.Fatalf("after shrink: %d records in %d slots, front %d; want 3, 4, 117", r.len(), len(r.buf), r.front().number)
	}
	for pn := uint64(120); pn < 130; pn++ {
		r.push(pn).ref = pn
	}
	for pn := uint64(117); pn < 130; pn++ {
		if p := r.at(pn); p == nil || p.ref != pn {
			t.Fatalf("record %d after growing again: %+v", pn, p)
		}
	}
	for r.len() > 0 {
		r.popFront()
	}
	r.shrink()
	if r.buf != nil {
		t.Fatalf("an empty ring kept %d slots", len(r.buf))
	}
	if p := r.push(7); p.number != 7 || r.at(7) != p {
		t.Fatal("push after the ring was dropped")
	}
}
