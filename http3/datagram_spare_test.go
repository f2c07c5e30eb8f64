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
