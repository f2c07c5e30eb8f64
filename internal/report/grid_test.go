package report

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"
)

func TestGridPNG(t *testing.T) {
	g := Grid{
		Title: "two kinds of panel", Columns: 2, PanelWidth: 8, PanelHeight: 6, DPI: 50,
		Cells: []Cell{
			BoxPanel{Title: "boxes", YLabel: "s", Points: true, RefName: "limit", Boxes: []Box{
				{Name: "a", Values: []float64{1, 2, 3, 4, 10}, Ref: 0.5},
				{Name: "b", Values: []float64{2}},
			}},
			Panel{Title: "cdf", Kind: CDF, Series: []Series{{Name: "a", Y: []float64{1, 2, 3}}}},
			BoxPanel{Title: "one box", Boxes: []Box{{Name: "c", Values: []float64{5, 5}}}},
		},
	}
	var b bytes.Buffer
	if err := g.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	// Two columns of 8 cm, two rows of 6 cm and the title's band, at 50 dpi.
	wantW := int(math.Round(16 / 2.54 * 50))
	wantH := int(math.Round((12 + float64(titleHeight)/28.3464567) / 2.54 * 50))
	if got := img.Bounds().Size(); abs(got.X-wantW) > 1 || abs(got.Y-wantH) > 1 {
		t.Errorf("image %v, want about %dx%d", got, wantW, wantH)
	}
	// Without a title the band goes.
	g.Title = ""
	b.Reset()
	if err := g.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	if img, err = png.Decode(&b); err != nil {
		t.Fatal(err)
	}
	if h := img.Bounds().Dy(); abs(h-int(math.Round(12/2.54*50))) > 1 {
		t.Errorf("untitled image %d high", h)
	}
}

func TestGridRejectsBadData(t *testing.T) {
	bad := []Grid{
		{},
		{Cells: []Cell{BoxPanel{}}},
		{Cells: []Cell{BoxPanel{Boxes: []Box{{Name: "empty"}}}}},
		{Cells: []Cell{BoxPanel{Boxes: []Box{{Name: "nan", Values: []float64{1, math.NaN()}}}}}},
		{Cells: []Cell{BoxPanel{Boxes: []Box{{Name: "inf ref", Values: []float64{1}, Ref: math.Inf(1)}}}}},
		{Cells: []Cell{Panel{Kind: CDF, Series: []Series{{Name: "empty"}}}}},
	}
	for i, g := range bad {
		err := g.WritePNG(&bytes.Buffer{})
		if err == nil {
			t.Errorf("grid %d accepted", i)
		} else if !strings.HasPrefix(err.Error(), "report:") {
			t.Errorf("grid %d: error %q lacks the package prefix", i, err)
		}
	}
}

func TestTint(t *testing.T) {
	c := tint(palette[0], 0.2) // red d62728 towards white
	r, g, b, a := c.RGBA()
	if r>>8 != 0xf7 || g>>8 != 0xd4 || b>>8 != 0xd4 || a>>8 != 0xff {
		t.Errorf("tint = %02x %02x %02x %02x", r>>8, g>>8, b>>8, a>>8)
	}
}
