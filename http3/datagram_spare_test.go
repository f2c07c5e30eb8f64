package http3

import "testing"

// TestDatagramMuxSpareBounded: the buffers a burst's readers give back
// are kept for the connection only up to maxSpareDatagrams.
func TestDatagramMuxSpareBounded(t *testing.T) {
	m := newDatagramMux(nil, &datagramCounters{})
	for range datagramQueueLen {
		m.taken(make([]byte, 1400), true)
	}
	if n := len(m.spare); n != maxSpareDatagrams {
		t.Fatalf("kept %d buffers, want %d", n, maxSpareDatagrams)
	}
}

// recyclingConn is a datagramConn that takes buffers back at once.
type recyclingConn struct {
	datagramConn
	back int
}

func (c *recyclingConn) RecycleDatagrams(bs [][]byte) { c.back += len(bs) }

// TestDatagramMuxSpareOverflow: over a connection that takes buffers back
// at once, the buffers beyond the mux's spares go back to it a batch at a
// time instead of being dropped.
func TestDatagramMuxSpareOverflow(t *testing.T) {
	c := &recyclingConn{}
	m := newDatagramMux(c, &datagramCounters{})
	for range 3*maxSpareDatagrams + 1 {
		m.taken(make([]byte, 1400), true)
	}
	if c.back != 3*maxSpareDatagrams || len(m.spare) != 1 {
		t.Fatalf("gave back %d buffers and kept %d, want %d and 1", c.back, len(m.spare), 3*maxSpareDatagrams)
	}
}
