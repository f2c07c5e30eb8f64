package report

import (
	"bytes"
	"errors"
	"image/png"
	"slices"
	"testing"
)

// labels lists the labelled ticks of a log axis over [min, max].
func labels(min, max float64) (labelled []string, all int) {
	for _, t := range (logTicks{}).Ticks(min, max) {
		if t.Label != "" {
			labelled = append(labelled, t.Label)
		}
		all++
	}
	return labelled, all
}

func TestLogTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []string
		all      int
	}{
		// 0.3 to 0.9, 1 to 9, 10 to 40: 1, 2 and 5 times the powers.
		{0.3, 45, []string{"0.5", "1", "2", "5", "10", "20"}, 7 + 9 + 4},
		// Many decades: only the powers.
		{0.001, 1e6, []string{"0.001", "0.01", "0.1", "1", "10", "100", "1000", "10000", "100000", "1e+06"}, 9*9 + 1},
		// Too narrow for two labels of the 1-2-5 kind: every tick.
		{2.5, 4.5, []string{"3", "4"}, 2},
	} {
		got, all := labels(c.min, c.max)
		if !slices.Equal(got, c.want) || all != c.all {
			t.Errorf("[%v, %v]: labels %q of %d ticks, want %q of %d", c.min, c.max, got, all, c.want, c.all)
		}
	}
	// Tick values are the decimals themselves, not m x 10^e with its
	// rounding error.
	for _, tk := range (logTicks{}).Ticks(0.25, 0.35) {
		if tk.Value != 0.3 {
			t.Errorf("tick %v, want 0.3", tk.Value)
		}
	}
	for _, r := range [][2]float64{{0, 1}, {-1, 10}, {5, 5}, {5, 1}} {
		if ticks := (logTicks{}).Ticks(r[0], r[1]); ticks != nil {
			t.Errorf("ticks over [%v, %v]: %v", r[0], r[1], ticks)
		}
	}
}

func TestLogPanels(t *testing.T) {
	ok := Grid{Columns: 2, PanelWidth: 8, PanelHeight: 6, DPI: 50, Cells: []Cell{
		BoxPanel{Title: "log boxes", LogY: true, Points: true, Boxes: []Box{
			{Name: "a", Values: []float64{0.9, 1, 1.1, 4, 12}, Ref: 0.4},
			{Name: "b", Values: []float64{3}},
		}},
		Panel{Title: "log cdf", Kind: CDF, LogX: true, X: Range{Min: 0.3, Max: 40},
			Series: []Series{{Name: "a", Y: []float64{0.9, 1, 12}}, {Name: "limit", Y: []float64{0.4}}}},
	}}
	var b bytes.Buffer
	if err := ok.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&b); err != nil {
		t.Fatal(err)
	}
	// Values a log axis cannot show are errors, never a panic in the
	// plotting library.
	for name, cell := range map[string]Cell{
		"box value 0":   BoxPanel{LogY: true, Boxes: []Box{{Name: "a", Values: []float64{0, 1}}}},
		"box range":     BoxPanel{LogY: true, Y: Range{Min: -1, Max: 2}, Boxes: []Box{{Name: "a", Values: []float64{1}}}},
		"cdf value":     Panel{Kind: CDF, LogX: true, Series: []Series{{Name: "a", Y: []float64{-2, 1}}}},
		"points x":      Panel{Kind: Points, LogX: true, Series: []Series{{Name: "a", X: []float64{0}, Y: []float64{1}}}},
		"cdf range min": Panel{Kind: CDF, LogX: true, X: Range{Min: 0, Max: 3}, Series: []Series{{Name: "a", Y: []float64{1}}}},
	} {
		err := Grid{DPI: 30, Cells: []Cell{cell}}.WritePNG(&bytes.Buffer{})
		if !errors.Is(err, errNotPositive) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
