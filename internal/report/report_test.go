package report

import (
	"bytes"
	"encoding/csv"
	"image/png"
	"math"
	"strings"
	"testing"
)

func sampleTable(t *testing.T) *Table {
	t.Helper()
	tb := &Table{Title: "Results", Columns: []string{"scheme", "overhead", "recovered"}}
	for _, r := range [][]string{{"rlc-adaptive", "1.85%", "100.00%"}, {"xor", "10.00%", "61.2%"}} {
		if err := tb.AddRow(r...); err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

func TestTableText(t *testing.T) {
	var b bytes.Buffer
	if err := sampleTable(t).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := "Results\n" +
		"scheme        overhead  recovered\n" +
		"---------------------------------\n" +
		"rlc-adaptive     1.85%    100.00%\n" +
		"xor             10.00%      61.2%\n"
	if b.String() != want {
		t.Errorf("text table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestTableCSVRoundTrip(t *testing.T) {
	tb := sampleTable(t)
	tb.Rows = append(tb.Rows, []string{`quoted "name", with comma`, "1", "2"})
	var b bytes.Buffer
	if err := tb.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0][1] != "overhead" || rows[3][0] != `quoted "name", with comma` {
		t.Errorf("CSV read back as %q", rows)
	}
}

func TestTableRejectsRaggedRow(t *testing.T) {
	tb := &Table{Columns: []string{"a", "b"}}
	if err := tb.AddRow("only one"); err == nil {
		t.Error("a row with too few cells was accepted")
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, map[string]float64{"overhead": 0.0185}); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "{\n  \"overhead\": 0.0185\n}\n" {
		t.Errorf("JSON %q", got)
	}
	if err := WriteJSON(&b, math.NaN()); err == nil {
		t.Error("NaN encoded without error")
	}
}

func TestFigurePNG(t *testing.T) {
	f := Figure{Columns: 2, PanelWidth: 8, PanelHeight: 6, DPI: 50, Panels: []Panel{
		{Title: "lines", Kind: Lines, Series: []Series{{Name: "a", X: []float64{0, 1, 2}, Y: []float64{0, 1, 4}}}},
		{Title: "cdf", Kind: CDF, Series: []Series{{Name: "b", Y: []float64{3, 1, 2}}}, X: Range{0, 5}},
		{Title: "points", Kind: Points, Series: []Series{{Name: "c", X: []float64{1}, Y: []float64{1}}}},
	}}
	var b bytes.Buffer
	if err := f.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	// Two columns of 8 cm and two rows of 6 cm at 50 dpi.
	wantW, wantH := int(math.Round(16/2.54*50)), int(math.Round(12/2.54*50))
	if got := img.Bounds().Size(); abs(got.X-wantW) > 1 || abs(got.Y-wantH) > 1 {
		t.Errorf("image %v, want about %dx%d", got, wantW, wantH)
	}
}

func abs(x int) int { return max(x, -x) }

func TestFigureRejectsBadData(t *testing.T) {
	bad := []Figure{
		{},
		{Panels: []Panel{{Series: []Series{{X: []float64{1, 2}, Y: []float64{1}}}}}},
		{Panels: []Panel{{Series: []Series{{X: []float64{1}, Y: []float64{math.NaN()}}}}}},
		{Panels: []Panel{{Kind: CDF, Series: []Series{{Name: "empty"}}}}},
	}
	for i, f := range bad {
		err := f.WritePNG(&bytes.Buffer{})
		if err == nil {
			t.Errorf("figure %d accepted", i)
		} else if !strings.HasPrefix(err.Error(), "report:") {
			t.Errorf("figure %d: error %q lacks the package prefix", i, err)
		}
	}
}
