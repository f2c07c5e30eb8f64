//go:build linux

package emulate

import (
	"testing"
	"time"
)

// TestDropLogRecordsReasons: each offer whose counters moved is recorded
// with its reason, one without a drop is not, and a full log says so.
func TestDropLogRecordsReasons(t *testing.T) {
	var l dropLog
	base := dropCounts{loss: 3, outage: 1, queue: 2}
	l.noteOffer(time.Second, true, 100, base, dropCounts{loss: 4, outage: 1, queue: 2})
	l.noteOffer(2*time.Second, false, 1400, base, dropCounts{loss: 3, outage: 2, queue: 2})
	l.noteOffer(3*time.Second, false, 1400, base, dropCounts{loss: 3, outage: 1, queue: 3})
	l.noteOffer(4*time.Second, false, 1400, base, base)
	want := []Drop{
		{AtS: 1, Up: true, Size: 100, Reason: "loss"},
		{AtS: 2, Size: 1400, Reason: "outage"},
		{AtS: 3, Size: 1400, Reason: "queue"},
	}
	if len(l.drops) != len(want) {
		t.Fatalf("%d drops recorded, want %d: %+v", len(l.drops), len(want), l.drops)
	}
	for i := range want {
		if l.drops[i] != want[i] {
			t.Errorf("drop %d: %+v, want %+v", i, l.drops[i], want[i])
		}
	}
	for range dropLogMax {
		l.noteOffer(5*time.Second, true, 100, base, dropCounts{loss: 4, outage: 1, queue: 2})
	}
	if len(l.drops) != dropLogMax || !l.full {
		t.Errorf("%d drops and full %v after too many, want %d and true", len(l.drops), l.full, dropLogMax)
	}
}
