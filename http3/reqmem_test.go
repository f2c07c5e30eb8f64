package http3

import (
	"testing"

	"github.com/satquic/satquic/quic"
)

// fakeStream records the resets of a streamCanceler.
type fakeStream struct{ reset quic.StreamErrorCode }

func (f *fakeStream) CancelRead(c quic.StreamErrorCode)  { f.reset = c }
func (f *fakeStream) CancelWrite(c quic.StreamErrorCode) { f.reset = c }

// TestRequestMemory checks the charges' arithmetic: the connection's
// bound refuses without evicting, the server's budget evicts the oldest
// incomplete headers only when that makes enough room, a stream whose
// header was read keeps its read buffer charged to the server alone,
// and released or evicted charges take no more.
func TestRequestMemory(t *testing.T) {
	var counts serverCounters
	const r, w = readBufferCost, waitCost
	m := newRequestMemory(4*(r+w), 0, &counts)
	a, b := &connMemory{limit: 3 * r}, &connMemory{limit: -1}
	check := func(what string, used, aUsed, bUsed int64) {
		t.Helper()
		if m.used != used || a.used != aUsed || b.used != bUsed {
			t.Errorf("%s: server %d, a %d, b %d; want %d, %d, %d", what, m.used, a.used, b.used, used, aUsed, bUsed)
		}
	}
	var fa [4]fakeStream
	var ca [4]*streamCharge
	for i := range 3 {
		var ok bool
		if ca[i], ok = m.open(a, &fa[i], nil); !ok {
			t.Fatalf("stream %d of a refused", i)
		}
	}
	if _, ok := m.open(a, &fa[3], nil); ok || fa[3].reset != 0 {
		t.Error("a fourth stream of a fit its bound of three")
	}
	check("a full", 3*(r+w), 3*r, 0)

	// b's growth past the budget evicts a's oldest, as much as needed.
	fb := &fakeStream{}
	cb, ok := m.open(b, fb, nil)
	if !ok {
		t.Fatal("b refused")
	}
	if err := cb.grow(int(2 * (r + w))); err != nil {
		t.Fatalf("b's growth: %v", err)
	}
	if fa[0].reset != quic.StreamErrorCode(ErrCodeRequestRejected) || fa[1].reset != quic.StreamErrorCode(ErrCodeRequestRejected) || fa[2].reset != 0 {
		t.Errorf("resets %v, want the two oldest of a", fa)
	}
	check("b grew", 4*(r+w), r, r+2*(r+w))
	if err := ca[0].grow(1); err != errNoMemory {
		t.Errorf("an evicted stream grew: %v", err)
	}
	// Not enough to evict for: b cannot evict itself.
	if err := cb.grow(int(2 * (r + w))); err != errNoMemory || fa[2].reset != 0 {
		t.Errorf("b grew past what evictions could free: %v", err)
	}
	check("refused growth", 4*(r+w), r, r+2*(r+w))

	cb.headerDone()
	check("b's header read", (r+w)+r, r, 0)
	if err := cb.grow(100); err != nil {
		t.Errorf("trailers: %v", err)
	}
	check("b's trailers", (r+w)+r+100, r, 100)
	cb.trailersDone()
	check("b's trailers read", (r+w)+r, r, 0)
	cb.release()
	cb.release()
	if err := cb.grow(1); err != errNoMemory {
		t.Errorf("a released stream grew: %v", err)
	}
	ca[2].release()
	check("all released", 0, 0, 0)
	if counts.rejected.Load() != 1 || counts.evicted.Load() != 2 || counts.overflowed.Load() != 1 {
		t.Errorf("rejected %d, evicted %d, overflowed %d", counts.rejected.Load(), counts.evicted.Load(), counts.overflowed.Load())
	}
	if used, reading := m.snapshot(); used != 0 || reading != 0 {
		t.Errorf("snapshot %d, %d", used, reading)
	}
}
