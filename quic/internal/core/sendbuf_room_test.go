package core

import "testing"

// A send buffer's unacknowledged bytes leave out those acknowledged above
// a gap, which it still holds: 10000 bytes written, [1000, 4000) and
// [5000, 10000) acknowledged, 10000 held and 2000 unacknowledged; the gaps
// acknowledged, nothing is held.
func TestSendBufferUnacked(t *testing.T) {
	var b sendBuffer
	b.write(make([]byte, 10000))
	b.onAck(1000, 3000)
	b.onAck(5000, 5000)
	if b.buffered() != 10000 || b.unacked() != 2000 || b.acked.total() != 8000 {
		t.Fatalf("buffered %d, unacked %d, acked above the gap %d; want 10000, 2000 and 8000",
			b.buffered(), b.unacked(), b.acked.total())
	}
	b.onAck(0, 1000)
	if b.buffered() != 6000 || b.unacked() != 1000 {
		t.Fatalf("after the first gap: buffered %d, unacked %d; want 6000 and 1000", b.buffered(), b.unacked())
	}
	b.onAck(4000, 1000)
	if b.buffered() != 0 || b.unacked() != 0 {
		t.Fatalf("all acknowledged: buffered %d, unacked %d", b.buffered(), b.unacked())
	}
}
