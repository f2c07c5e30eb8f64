//go:build linux

package emulate

import (
	"testing"
	"time"
)

func TestHistBucketsAreContiguous(t *testing.T) {
	for us := uint64(0); us < 1<<20; us++ {
		i := histIndex(us)
		if us < histLow(i) || us >= histLow(i+1) {
			t.Fatalf("%d us in bucket %d = [%d,%d)", us, i, histLow(i), histLow(i+1))
		}
	}
}

func TestHistQuantiles(t *testing.T) {
	var h hist
	if h.quantile(0.5) != 0 {
		t.Fatal("empty histogram has a nonzero median")
	}
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * 100 * time.Microsecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		got := h.quantile(c.q)
		if diff := got - c.want; diff < -c.want/60 || diff > c.want/60 {
			t.Errorf("quantile %v = %v, want %v within 1.6%%", c.q, got, c.want)
		}
	}
	if h.max != 100*time.Millisecond {
		t.Errorf("max %v", h.max)
	}
}
