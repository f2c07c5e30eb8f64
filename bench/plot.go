package bench

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/satquic/satquic/bench/report"
)

// Figure draws the experiment as seed 000 did, one row per size: the
// completion times as a box per stack with the physical limit dashed
// across it, and beside it their empirical CDFs with the limits as
// vertical steps. Stacks keep one colour in both panels.
func (d Document) Figure() (report.Grid, error) {
	if len(d.Results) == 0 {
		return report.Grid{}, fmt.Errorf("bench: no results to plot")
	}
	var sizes []int64
	var stacks []string
	for _, r := range d.Results {
		if !slices.Contains(sizes, r.SizeBytes) {
			sizes = append(sizes, r.SizeBytes)
		}
		if !slices.Contains(stacks, r.Stack) {
			stacks = append(stacks, r.Stack)
		}
	}
	p := d.Metadata.Profile
	g := report.Grid{
		Title: fmt.Sprintf("Download completion time over %s (%s, RTT %v ms, %s), %d runs, seed %d",
			p.Name, ratePair(p), p.RTTMs, lossPair(p), d.Metadata.Runs, d.Metadata.Seed),
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
		// A margin keeps the limit's step off the frame, and a wider
		// one on the right leaves the bottom right corner, where every
		// curve has risen, to the legend.
		span := max(hi-lo, hi*0.01)
		cdf.X = report.Range{Min: lo - 0.04*span, Max: hi + 0.3*span}
		// A CDF of one value is a vertical step: the limit, in the
		// colours after the stacks'.
		for _, l := range limitOrder {
			name := "limit"
			if len(limitOrder) > 1 {
				name += " " + strings.Join(limits[l], ", ")
			}
			cdf.Series = append(cdf.Series, report.Series{Name: name, Y: []float64{l}})
		}
		g.Cells = append(g.Cells, box, cdf)
	}
	return g, nil
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
