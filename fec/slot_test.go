package fec

import "testing"

// A ring slot is allocated at its first symbol's size, grows once to a
// quarter more than a longer symbol needs (never past the largest
// symbol), and is reused as long as symbols fit.
func TestPutCodedSymbol(t *testing.T) {
	const maxSymbol = 9000
	slot := putCodedSymbol(nil, make([]byte, 100), maxSymbol)
	if cap(slot) != symbolLenSize+100 {
		t.Fatalf("first symbol: cap %d", cap(slot))
	}
	slot = putCodedSymbol(slot, make([]byte, 1400), maxSymbol)
	need := symbolLenSize + 1400
	if cap(slot) != need+need/4 {
		t.Fatalf("grown: cap %d, want %d", cap(slot), need+need/4)
	}
	before := &slot[:1][0]
	for _, n := range []int{1452, 1300, 1720} {
		slot = putCodedSymbol(slot, make([]byte, n), maxSymbol)
		if &slot[:1][0] != before {
			t.Fatalf("a %d-byte symbol reallocated the slot", n)
		}
		if len(slot) != symbolLenSize+n {
			t.Fatalf("len %d for a %d-byte symbol", len(slot), n)
		}
	}
	// Near the largest symbol the margin stops at it.
	slot = putCodedSymbol(slot, make([]byte, 8000), maxSymbol)
	if cap(slot) != symbolLenSize+maxSymbol {
		t.Fatalf("near the largest: cap %d, want %d", cap(slot), symbolLenSize+maxSymbol)
	}
	payload := make([]byte, 1452)
	if n := testing.AllocsPerRun(100, func() { slot = putCodedSymbol(slot, payload, maxSymbol) }); n != 0 {
		t.Fatalf("a fitting symbol allocates %v times", n)
	}
}
