package bench

import (
	"math"
	"testing"
)

func TestPercentileExact(t *testing.T) {
	four := []float64{4, 1, 3, 2} // unsorted on purpose
	five := []float64{10, 50, 20, 40, 30}
	for _, c := range []struct {
		samples []float64
		q, want float64
	}{
		{four, 0, 1},
		{four, 0.5, 2.5},   // mean of the middle two
		{four, 0.9, 3.7},   // rank 2.7: 3 + 0.7 x (4-3)
		{four, 0.99, 3.97}, // rank 2.97
		{four, 1, 4},
		{five, 0.5, 30},
		{five, 0.25, 20},
		{five, 0.9, 46}, // rank 3.6: 40 + 0.6 x 10
		{five, 0.99, 49.6},
		{[]float64{7}, 0.5, 7},
		{[]float64{7}, 0.99, 7},
	} {
		if got := Percentile(c.samples, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.samples, c.q, got, c.want)
		}
	}
	if four[0] != 4 {
		t.Error("Percentile sorted its argument in place")
	}
	for _, q := range []float64{-0.1, 1.1} {
		if !math.IsNaN(Percentile(four, q)) {
			t.Errorf("Percentile(q=%v) is not NaN", q)
		}
	}
	if !math.IsNaN(Percentile(nil, 0.5)) {
		t.Error("Percentile of no samples is not NaN")
	}
}

func TestSummarize(t *testing.T) {
	got := Summarize([]float64{3, 9, 1, 7, 5, 11, 2, 4, 8, 6})
	want := Summary{Median: 5.5, P90: 9.2, P99: 10.82, Min: 1, Max: 11}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(got.Median, want.Median) || !near(got.P90, want.P90) || !near(got.P99, want.P99) ||
		got.Min != want.Min || got.Max != want.Max {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
}
