package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/satquic/satquic/internal/report"
)

// Figure draws the experiment as seed 000 did, one row per size: the
// completion times as a box per stack with the physical limit dashed
// across it, and beside it their empirical CDFs with the limits as
// vertical steps. Stacks keep one colour in both panels.
func (d Document) Figure() (report.Grid, error) {
	if len(d.Results) == 0 {
		return report.Grid{}, fmt.Errorf("bench: no results to plot")
	}
	return d.figure(d.sizes())
}

// SizeFigure is the row of Figure for one size, as a figure of its own:
// at 50 runs of four stacks, a figure per size reads better than one row
// among several.
func (d Document) SizeFigure(size int64) (report.Grid, error) {
	if !slices.Contains(d.sizes(), size) {
		return report.Grid{}, fmt.Errorf("bench: no results at %s to plot", FormatSize(size))
	}
	return d.figure([]int64{size})
}

// sizes lists the sizes of the results, in their order.
func (d Document) sizes() []int64 {
	var sizes []int64
	for _, r := range d.Results {
		if !slices.Contains(sizes, r.SizeBytes) {
			sizes = append(sizes, r.SizeBytes)
		}
	}
	return sizes
}

// PlotFiles are the names WritePlots gives its figures in a directory:
// the whole experiment, then one per size.
func (d Document) PlotFiles() []string {
	names := []string{"download.png"}
	for _, size := range d.sizes() {
		names = append(names, "download-"+FormatSize(size)+".png")
	}
	return names
}

// WritePlots writes Figure and a SizeFigure per size into dir (made when
// missing), named as PlotFiles says, and returns their paths.
func (d Document) WritePlots(dir string) ([]string, error) {
	if len(d.Results) == 0 {
		return nil, fmt.Errorf("bench: no results to plot")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: plot directory: %w", err)
	}
	names := d.PlotFiles()
	var paths []string
	for i, name := range names {
		var g report.Grid
		var err error
		if i == 0 {
			g, err = d.Figure()
		} else {
			g, err = d.SizeFigure(d.sizes()[i-1])
		}
		if err == nil {
			p := filepath.Join(dir, name)
			err = g.SavePNG(p)
			paths = append(paths, p)
		}
		if err != nil {
			return paths, fmt.Errorf("bench: %s: %w", name, err)
		}
	}
	return paths, nil
}

// figure draws the rows of the given sizes.
func (d Document) figure(sizes []int64) (report.Grid, error) {
	var stacks []string
	for _, r := range d.Results {
		if !slices.Contains(stacks, r.Stack) {
			stacks = append(stacks, r.Stack)
		}
	}
	p := d.Metadata.Profile
	title := fmt.Sprintf("Download completion time over %s (%s, RTT %v ms, %s), %d runs, seed %d",
		p.Name, ratePair(p), p.RTTMs, lossPair(p), d.Metadata.Runs, d.Metadata.Seed)
	if len(sizes) == 1 {
		title = FormatSize(sizes[0]) + " " + strings.ToLower(title[:1]) + title[1:]
	}
	g := report.Grid{
		Title:   title,
		Columns: 2, PanelWidth: 15, PanelHeight: 9.5,
	}
	for _, size := range sizes {
		box := report.BoxPanel{
			// The limit is named in the title: a legend inside the
			// panel would cover boxes or marks wherever it went.
			Title:  FormatSize(size) + ": completion time (dashed: physical limit)",
			YLabel: "seconds",
			Points: true,
		}
		cdf := report.Panel{
			Title:  FormatSize(size) + ": CDF of completion time",
			XLabel: "seconds", YLabel: "fraction of runs",
			Kind:         report.CDF,
			LegendBottom: true,
		}
		limits := map[float64][]string{}
		var limitOrder []float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, name := range stacks {
			r, ok := d.result(name, size)
			if !ok {
				return report.Grid{}, fmt.Errorf("bench: no result for %s at %s", name, FormatSize(size))
			}
			box.Boxes = append(box.Boxes, report.Box{Name: name, Values: r.SamplesS, Ref: r.LimitS})
			cdf.Series = append(cdf.Series, report.Series{Name: name, Y: r.SamplesS})
			if _, seen := limits[r.LimitS]; !seen {
				limitOrder = append(limitOrder, r.LimitS)
			}
			limits[r.LimitS] = append(limits[r.LimitS], name)
			lo = min(lo, r.LimitS, r.MinS)
			hi = max(hi, r.LimitS, r.MaxS)
		}
		// A CDF of one value is a vertical step: the limit, in the
		// colours after the stacks'.
		for _, l := range limitOrder {
			name := "limit"
			if len(limitOrder) > 1 {
				name += " " + strings.Join(limits[l], ", ")
			}
			cdf.Series = append(cdf.Series, report.Series{Name: name, Y: []float64{l}})
		}
		// A margin keeps the limit's step off the frame, and a wider
		// one on the right leaves the bottom right corner, where every
		// curve has risen, to the legend.
		right := cdfRightMargin(cdf.Series, g.PanelWidth)
		if lo > 0 && hi/lo >= logSpread {
			// Runs many times the limit: a log axis keeps the runs near
			// the limit apart, and the margins become ratios.
			box.LogY, cdf.LogX = true, true
			box.YLabel, cdf.XLabel = "seconds (log scale)", "seconds (log scale)"
			span := math.Log(hi / lo)
			cdf.X = report.Range{Min: lo * math.Exp(-cdfLeftMargin*span), Max: hi * math.Exp(right*span)}
		} else {
			span := max(hi-lo, hi*0.01)
			cdf.X = report.Range{Min: lo - cdfLeftMargin*span, Max: hi + right*span}
		}
		g.Cells = append(g.Cells, box, cdf)
	}
	return g, nil
}

// logSpread is the ratio of the slowest run (or limit) to the fastest
// above which a size's panels use logarithmic time axes: with runs at ten
// times the limit, a linear axis squeezes every good run into its bottom
// tenth.
const logSpread = 4

// cdfLeftMargin is the share of the data's span left free before the
// first limit of a CDF panel.
const cdfLeftMargin = 0.04

// The legend's size, measured on the PNGs the report package draws at its
// default font: the width of a line's sample and its gap, and of one
// character of a name, in centimetres; and the width a panel's frame, axis
// and padding take from its cell.
const (
	legendSampleCm = 0.8
	legendCharCm   = 0.14
	panelAxisCm    = 2.8
)

// cdfRightMargin is the share of the data's span to leave free after the
// last run of a CDF panel, so that the legend in the bottom right corner
// covers no curve: wide enough for the longest name, at most as wide as
// the data.
func cdfRightMargin(series []report.Series, panelWidthCm float64) float64 {
	longest := 0
	for _, s := range series {
		longest = max(longest, len([]rune(s.Name)))
	}
	legend := legendSampleCm + legendCharCm*float64(longest)
	// f is the share of the axis the legend takes; the axis runs over
	// (1 + left margin + right margin) spans, and a further 3% of a span
	// keeps the last step off the legend's text.
	f := min(legend/max(panelWidthCm-panelAxisCm, 1), 0.5)
	return ((1+cdfLeftMargin)*f + 0.03) / (1 - f)
}

func (d Document) result(stack string, size int64) (Result, bool) {
	for _, r := range d.Results {
		if r.Stack == stack && r.SizeBytes == size {
			return r, true
		}
	}
	return Result{}, false
}

func lossPair(p ProfileInfo) string {
	switch {
	case p.Down.Loss == p.Up.Loss && p.Down.Loss == "none":
		return "no loss"
	case p.Down.Loss == p.Up.Loss:
		return "loss " + p.Down.Loss + " each way"
	}
	return "loss " + p.Down.Loss + " down, " + p.Up.Loss + " up"
}

func ratePair(p ProfileInfo) string {
	mbps := func(bps float64) string {
		if bps <= 0 {
			return "unlimited"
		}
		return strconv.FormatFloat(bps/1e6, 'g', 4, 64)
	}
	return mbps(p.Down.RateBps) + "/" + mbps(p.Up.RateBps) + " Mbit/s"
}
