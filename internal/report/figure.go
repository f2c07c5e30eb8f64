package report

import (
	"bufio"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// PanelKind says how a panel draws its series.
type PanelKind int

const (
	// Lines joins each series' points in order and marks them.
	Lines PanelKind = iota
	// Points marks each point without joining them.
	Points
	// CDF draws the empirical cumulative distribution of each series' Y
	// values (X is ignored): a step from 0 to 1.
	CDF
)

// Series is one named set of points.
type Series struct {
	Name string
	X, Y []float64
}

// Range bounds an axis; the zero Range lets the data decide.
type Range struct {
	Min, Max float64
}

func (r Range) set() bool { return r.Min != 0 || r.Max != 0 }

// Panel is one plot of a figure.
type Panel struct {
	Title, XLabel, YLabel string
	Kind                  PanelKind
	Series                []Series
	X, Y                  Range
	// LegendLeft and LegendBottom move the legend away from the default
	// top right corner, where it may hide the data.
	LegendLeft, LegendBottom bool
	// LogX makes the X axis logarithmic (for a CDF, the values' axis);
	// every X value and the X range must then be above 0.
	LogX bool
}

// Figure is a grid of panels saved as one PNG.
type Figure struct {
	// Columns is the number of panels per row; 0 means 1.
	Columns int
	// PanelWidth and PanelHeight are each panel's size in centimetres;
	// 0 means 16 x 10.
	PanelWidth, PanelHeight float64
	// DPI is the resolution; 0 means 110.
	DPI    int
	Panels []Panel
	// SharedLegend draws no legend inside the panels but one legend, in
	// a cell of its own after the last panel, naming the series of the
	// first panel. Series with the same index share a style across
	// panels, so one legend serves them all.
	SharedLegend bool
}

// SavePNG writes the figure to path.
func (f Figure) SavePNG(path string) error { return savePNG(path, f.WritePNG) }

// WritePNG renders the figure as PNG to w.
func (f Figure) WritePNG(w io.Writer) error {
	if len(f.Panels) == 0 {
		return errors.New("report: figure has no panels")
	}
	cols := max(f.Columns, 1)
	cells := len(f.Panels)
	if f.SharedLegend {
		cells++
	}
	rows := (cells + cols - 1) / cols
	pw, ph := f.PanelWidth, f.PanelHeight
	if pw <= 0 {
		pw = 16
	}
	if ph <= 0 {
		ph = 10
	}
	dpi := f.DPI
	if dpi <= 0 {
		dpi = 110
	}
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for i, p := range f.Panels {
		pl, err := p.build(!f.SharedLegend)
		if err != nil {
			return fmt.Errorf("report: panel %q: %w", p.Title, err)
		}
		grid[i/cols][i%cols] = pl
	}
	if f.SharedLegend {
		i := len(f.Panels)
		grid[i/cols][i%cols] = legendPlot(f.Panels[0].Series)
	}
	img := vgimg.NewWith(
		vgimg.UseWH(vg.Length(pw*float64(cols))*vg.Centimeter, vg.Length(ph*float64(rows))*vg.Centimeter),
		vgimg.UseDPI(dpi),
	)
	dc := draw.New(img)
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

// build turns a Panel into a gonum plot, with its legend or without.
func (p Panel) build(withLegend bool) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.Title.TextStyle.Font.Size = vg.Points(13)
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	for _, ax := range []*plot.Axis{&pl.X, &pl.Y} {
		ax.Label.TextStyle.Font.Size = vg.Points(11)
		ax.Tick.Label.Font.Size = vg.Points(10)
	}
	pl.Legend.Top = !p.LegendBottom
	pl.Legend.Left = p.LegendLeft
	pl.Legend.TextStyle.Font.Size = vg.Points(10)
	pl.Add(plotter.NewGrid())
	for i, s := range p.Series {
		if err := addSeries(pl, p.Kind, i, s, p.LogX); err != nil {
			return nil, fmt.Errorf("series %q: %w", s.Name, err)
		}
	}
	if p.LogX {
		if p.X.set() && !(p.X.Min > 0) {
			return nil, fmt.Errorf("range of X from %v: %w", p.X.Min, errNotPositive)
		}
		setLogAxis(&pl.X)
	}
	if !withLegend {
		pl.Legend = plot.NewLegend()
	}
	if p.X.set() {
		pl.X.Min, pl.X.Max = p.X.Min, p.X.Max
	}
	if p.Y.set() {
		pl.Y.Min, pl.Y.Max = p.Y.Min, p.Y.Max
	}
	return pl, nil
}

// palette holds well separated colours, in the order series take them;
// series beyond it cycle with another dash pattern.
var palette = []color.RGBA{
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0x17, 0xbe, 0xcf, 0xff}, // cyan
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x7f, 0x7f, 0x7f, 0xff}, // grey
	{0xbc, 0xbd, 0x22, 0xff}, // olive
}

// seriesStyle is the line and marker style of the i-th series.
func seriesStyle(i int) (draw.LineStyle, draw.GlyphStyle) {
	c := palette[i%len(palette)]
	line := draw.LineStyle{Color: c, Width: vg.Points(1.8), Dashes: plotutil.Dashes(i / len(palette))}
	glyph := draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: plotutil.Shape(i)}
	return line, glyph
}

func addSeries(pl *plot.Plot, kind PanelKind, i int, s Series, logX bool) error {
	xys, err := seriesPoints(kind, s)
	if err != nil {
		return err
	}
	if logX {
		for _, p := range xys {
			if !(p.X > 0) {
				return fmt.Errorf("x value %v: %w", p.X, errNotPositive)
			}
		}
	}
	lineStyle, glyphStyle := seriesStyle(i)
	switch kind {
	case CDF:
		line, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		line.LineStyle = lineStyle
		line.StepStyle = plotter.PostStep
		pl.Add(line)
		pl.Legend.Add(s.Name, line)
	case Points:
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		glyphStyle.Radius = vg.Points(5)
		sc.GlyphStyle = glyphStyle
		pl.Add(sc)
		pl.Legend.Add(s.Name, sc)
	default:
		line, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		line.LineStyle = lineStyle
		sc.GlyphStyle = glyphStyle
		pl.Add(line, sc)
		pl.Legend.Add(s.Name, line, sc)
	}
	return nil
}

// legendPlot is an axis-free plot that only shows a legend of the given
// series, with each series' line and marker.
func legendPlot(series []Series) *plot.Plot {
	pl := plot.New()
	pl.HideAxes()
	pl.Legend.Top, pl.Legend.Left = true, true
	pl.Legend.TextStyle.Font.Size = vg.Points(13)
	pl.Legend.ThumbnailWidth = vg.Points(36)
	pl.Legend.Padding = vg.Points(6)
	for i, s := range series {
		lineStyle, glyphStyle := seriesStyle(i)
		pl.Legend.Add(s.Name, legendThumb{lineStyle, glyphStyle})
	}
	return pl
}

// legendThumb draws a legend entry's line with its marker in the middle.
type legendThumb struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
}

func (t legendThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(t.line, c.Min.X, y, c.Max.X, y)
	c.DrawGlyph(t.glyph, c.Center())
}

// seriesPoints checks a series and returns the points to draw: the
// series itself, or for a CDF the steps of its empirical distribution.
func seriesPoints(kind PanelKind, s Series) (plotter.XYs, error) {
	if kind == CDF {
		if len(s.Y) == 0 {
			return nil, errors.New("no values")
		}
		v := slices.Clone(s.Y)
		slices.Sort(v)
		xys := make(plotter.XYs, 0, len(v)+1)
		xys = append(xys, plotter.XY{X: v[0], Y: 0})
		for i, x := range v {
			xys = append(xys, plotter.XY{X: x, Y: float64(i+1) / float64(len(v))})
		}
		return xys, checkFinite(xys)
	}
	if len(s.X) != len(s.Y) || len(s.X) == 0 {
		return nil, fmt.Errorf("%d x values and %d y values", len(s.X), len(s.Y))
	}
	xys := make(plotter.XYs, len(s.X))
	for i := range s.X {
		xys[i] = plotter.XY{X: s.X[i], Y: s.Y[i]}
	}
	return xys, checkFinite(xys)
}

func checkFinite(xys plotter.XYs) error {
	for _, p := range xys {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return fmt.Errorf("point (%v, %v) is not finite", p.X, p.Y)
		}
	}
	return nil
}

// savePNG creates path and fills it with write, reporting the first error
// of writing, flushing or closing.
func savePNG(path string, write func(io.Writer) error) (err error) {
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer func() {
		if cerr := file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("report: %w", cerr)
		}
	}()
	bw := bufio.NewWriter(file)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: writing %s: %w", path, err)
	}
	return nil
}
