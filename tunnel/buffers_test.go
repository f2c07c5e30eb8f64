package tunnel

import "testing"

// TestBufferStack: the buffer given back last is the next one handed
// out, whole; buffers are made when none is free; those too small, nil,
// or beyond the limit are not kept.
func TestBufferStack(t *testing.T) {
	s := newBufferStack(1500, 3)
	got := make([][]byte, 2)
	s.fill(got)
	for _, b := range got {
		if len(b) != 1500 {
			t.Fatalf("a new buffer of %d bytes, want 1500", len(b))
		}
	}
	a, b := got[0], got[1]
	s.putAll([][]byte{a[:10], nil, make([]byte, 0, 100), b[:0]})
	if len(s.bufs) != 2 {
		t.Fatalf("kept %d buffers, want the 2 large enough", len(s.bufs))
	}
	one := make([][]byte, 1)
	s.fill(one)
	if &one[0][0] != &b[0] || len(one[0]) != 1500 {
		t.Fatal("the buffer given back last did not come out first, whole")
	}
	kept := [][]byte{make([]byte, 1500), make([]byte, 2000), make([]byte, 1500)}
	s.putAll(kept)
	if len(s.bufs) != 3 {
		t.Fatalf("kept %d buffers, want the limit of 3", len(s.bufs))
	}
	full := [][]byte{one[0], nil}
	s.fill(full)
	if &full[0][0] != &one[0][0] || len(full[1]) != 1500 || cap(full[1]) != 2000 {
		t.Fatal("fill replaced a buffer already there, or did not hand out the newest")
	}
}
