package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// This file adds box plots and a grid that mixes them with the panels of
// figure.go, under a common title: the download experiment shows one row
// per size, a box per stack beside the CDFs of the same runs.

// Box is one group of values drawn as a box plot.
type Box struct {
	Name   string
	Values []float64
	// Ref, when positive, marks a reference value across the box's slot
	// with a dashed line (the download experiment's physical limit).
	Ref float64
}

// BoxPanel draws one box per group side by side, each in the colour a
// Series of the same index takes in a Panel, so that a box and a CDF of
// the same data match.
type BoxPanel struct {
	Title, XLabel, YLabel string
	Boxes                 []Box
	Y                     Range
	// RefName names the reference marks in the legend.
	RefName string
	// Points also draws every value, spread across the box's slot, which
	// shows how few values a box of a small run rests on.
	Points bool
	// LogY makes the value axis logarithmic; every value and the range
	// must then be above 0.
	LogY bool
}

// Cell is one panel of a Grid: a Panel or a BoxPanel.
type Cell interface {
	// plot builds the cell's plot for a cell of the given width.
	plot(width vg.Length) (*plot.Plot, error)
	title() string
}

func (p Panel) plot(vg.Length) (*plot.Plot, error) { return p.build(true) }
func (p Panel) title() string                      { return p.Title }
func (b BoxPanel) title() string                   { return b.Title }

// Grid is a figure of cells of any kind, saved as one PNG.
type Grid struct {
	// Title, when set, is printed above the cells.
	Title string
	// Columns is the number of cells per row; 0 means 1.
	Columns int
	// PanelWidth and PanelHeight are each cell's size in centimetres;
	// 0 means 16 x 10.
	PanelWidth, PanelHeight float64
	// DPI is the resolution; 0 means 110.
	DPI   int
	Cells []Cell
}

// SavePNG writes the grid to path.
func (g Grid) SavePNG(path string) error { return savePNG(path, g.WritePNG) }

// titleHeight is the band above the cells that holds the title.
const titleHeight = vg.Length(0.9 * vg.Centimeter)

// WritePNG renders the grid as PNG to w.
func (g Grid) WritePNG(w io.Writer) error {
	if len(g.Cells) == 0 {
		return errors.New("report: grid has no cells")
	}
	cols := max(g.Columns, 1)
	rows := (len(g.Cells) + cols - 1) / cols
	pw, ph := g.PanelWidth, g.PanelHeight
	if pw <= 0 {
		pw = 16
	}
	if ph <= 0 {
		ph = 10
	}
	dpi := g.DPI
	if dpi <= 0 {
		dpi = 110
	}
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for i, c := range g.Cells {
		pl, err := c.plot(vg.Length(pw) * vg.Centimeter)
		if err != nil {
			return fmt.Errorf("report: panel %q: %w", c.title(), err)
		}
		grid[i/cols][i%cols] = pl
	}
	height := vg.Length(ph*float64(rows)) * vg.Centimeter
	if g.Title != "" {
		height += titleHeight
	}
	img := vgimg.NewWith(
		vgimg.UseWH(vg.Length(pw*float64(cols))*vg.Centimeter, height),
		vgimg.UseDPI(dpi),
	)
	dc := draw.New(img)
	if g.Title != "" {
		style := plot.New().Title.TextStyle
		style.Font.Size = vg.Points(14)
		style.XAlign, style.YAlign = draw.XCenter, draw.YCenter
		dc.FillText(style, vg.Point{X: dc.Center().X, Y: dc.Max.Y - titleHeight/2}, g.Title)
		dc = draw.Crop(dc, 0, 0, 0, -titleHeight)
	}
	tiles := draw.Tiles{
		Rows: rows, Cols: cols,
		PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12),
	}
	canvases := plot.Align(grid, tiles, dc)
	for r := range grid {
		for c, pl := range grid[r] {
			if pl != nil {
				pl.Draw(canvases[r][c])
			}
		}
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		return fmt.Errorf("report: encoding PNG: %w", err)
	}
	return nil
}

// The shares of the space between two boxes' centres that a box, the
// spread of its points and its reference mark take.
const (
	boxShare    = 0.5
	pointsShare = 0.36
	refShare    = 0.8
)

func (b BoxPanel) plot(cellWidth vg.Length) (*plot.Plot, error) {
	if len(b.Boxes) == 0 {
		return nil, errors.New("no boxes")
	}
	pl := plot.New()
	pl.Title.Text = b.Title
	pl.Title.TextStyle.Font.Size = vg.Points(13)
	pl.X.Label.Text = b.XLabel
	pl.Y.Label.Text = b.YLabel
	for _, ax := range []*plot.Axis{&pl.X, &pl.Y} {
		ax.Label.TextStyle.Font.Size = vg.Points(11)
		ax.Tick.Label.Font.Size = vg.Points(10)
	}
	pl.Legend.TextStyle.Font.Size = vg.Points(10)
	pl.Add(plotter.NewGrid())
	// The box width is a length, not a data span: estimate the data area
	// as 85% of the cell (the rest holds the Y axis), so that the box
	// takes boxShare of its slot and the points fall inside it.
	width := cellWidth * 0.85 * boxShare / vg.Length(len(b.Boxes))
	names := make([]string, len(b.Boxes))
	refShown := false
	for i, box := range b.Boxes {
		names[i] = box.Name
		if len(box.Values) == 0 {
			return nil, fmt.Errorf("box %q: no values", box.Name)
		}
		for _, v := range append([]float64{box.Ref}, box.Values...) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("box %q: value %v is not finite", box.Name, v)
			}
		}
		if b.LogY {
			for _, v := range box.Values {
				if !(v > 0) {
					return nil, fmt.Errorf("box %q: value %v: %w", box.Name, v, errNotPositive)
				}
			}
		}
		line, glyph := seriesStyle(i)
		bp, err := plotter.NewBoxPlot(width, float64(i), plotter.Values(box.Values))
		if err != nil {
			return nil, fmt.Errorf("box %q: %w", box.Name, err)
		}
		bp.BoxStyle = draw.LineStyle{Color: line.Color, Width: vg.Points(1.5)}
		bp.WhiskerStyle = bp.BoxStyle
		bp.MedianStyle = draw.LineStyle{Color: line.Color, Width: vg.Points(3)}
		bp.FillColor = tint(line.Color, 0.2)
		bp.GlyphStyle = draw.GlyphStyle{Color: line.Color, Radius: vg.Points(2.5), Shape: glyph.Shape}
		pl.Add(bp)
		if b.Points {
			if err := addBoxPoints(pl, i, box.Values, line.Color); err != nil {
				return nil, fmt.Errorf("box %q: %w", box.Name, err)
			}
		}
		if box.Ref > 0 {
			ref, err := plotter.NewLine(plotter.XYs{
				{X: float64(i) - refShare/2, Y: box.Ref}, {X: float64(i) + refShare/2, Y: box.Ref},
			})
			if err != nil {
				return nil, err
			}
			ref.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
			pl.Add(ref)
			if !refShown && b.RefName != "" {
				pl.Legend.Add(b.RefName, ref)
				refShown = true
			}
		}
	}
	pl.NominalX(names...)
	pl.X.Min, pl.X.Max = -0.5, float64(len(b.Boxes))-0.5
	pl.Legend.Top = true
	switch {
	case b.Y.set():
		if b.LogY && !(b.Y.Min > 0) {
			return nil, fmt.Errorf("range of Y from %v: %w", b.Y.Min, errNotPositive)
		}
		pl.Y.Min, pl.Y.Max = b.Y.Min, b.Y.Max
	case b.LogY:
		// The same margin as below, as a ratio.
		pad := math.Pow(pl.Y.Max/pl.Y.Min, 0.05)
		if pad <= 1 {
			pad = 1.05
		}
		pl.Y.Min, pl.Y.Max = pl.Y.Min/pad, pl.Y.Max*pad
	default:
		// A margin keeps the reference marks and the extreme values off
		// the axes.
		pad := (pl.Y.Max - pl.Y.Min) * 0.05
		if pad == 0 {
			pad = math.Abs(pl.Y.Max)*0.05 + 1e-9
		}
		pl.Y.Min, pl.Y.Max = pl.Y.Min-pad, pl.Y.Max+pad
	}
	if b.LogY {
		setLogAxis(&pl.Y)
	}
	return pl, nil
}

// addBoxPoints spreads the values evenly across a box's slot, left to
// right in the order given (run order shows a drift), as small hollow
// circles over the box.
func addBoxPoints(pl *plot.Plot, i int, values []float64, c color.Color) error {
	xys := make(plotter.XYs, len(values))
	for k, v := range values {
		off := 0.0
		if len(values) > 1 {
			off = (float64(k)/float64(len(values)-1) - 0.5) * pointsShare
		}
		xys[k] = plotter.XY{X: float64(i) + off, Y: v}
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return err
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2), Shape: draw.RingGlyph{}}
	pl.Add(sc)
	return nil
}

// tint mixes a colour with white, keeping share of the colour.
func tint(c color.Color, share float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(math.Round(share*float64(v>>8) + (1-share)*255)) }
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}
