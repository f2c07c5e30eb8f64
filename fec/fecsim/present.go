package fecsim

import (
	"fmt"
	"strconv"

	"github.com/satquic/satquic/internal/report"
)

// Tables and figures of simulation results, shared by `satquic sim` and
// `satquic demo`.

func pct(v float64) string { return strconv.FormatFloat(v*100, 'f', 2, 64) + "%" }

func packets(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// RunsTable has one row per run: the scheme, the loss and every metric.
func RunsTable(title string, runs []Result) *report.Table {
	t := &report.Table{Title: title, Columns: []string{
		"scheme", "loss", "overhead", "recovered", "residual", "delay p50", "delay p99", "decode ns/pkt", "mismatches",
	}}
	for _, r := range runs {
		// Rows always match the columns: AddRow cannot fail here.
		_ = t.AddRow(r.Label, r.Loss, pct(r.Overhead), pct(r.RecoveredRatio), pct(r.ResidualLoss),
			packets(r.RecoveryDelayP50), packets(r.RecoveryDelayP99),
			strconv.FormatFloat(r.DecodeNsPerPacket, 'f', 0, 64), strconv.FormatInt(r.Mismatches+r.DecodeErrors, 10))
	}
	return t
}

// MatrixTable shows a sweep as the paper's reproduction table does: one
// row per point, one column per scheme, cells "overhead / recovered".
func MatrixTable(title string, points []PointResult) *report.Table {
	t := &report.Table{Title: title, Columns: []string{"loss"}}
	if len(points) == 0 {
		return t
	}
	for _, r := range points[0].Results {
		t.Columns = append(t.Columns, r.Label)
	}
	for _, p := range points {
		row := []string{p.Point.Name}
		for _, r := range p.Results {
			row = append(row, pct(r.Overhead)+" / "+pct(r.RecoveredRatio))
		}
		_ = t.AddRow(row...)
	}
	return t
}

// SummaryTable has one row per scheme of a sweep: how often it recovered
// at least 95% and at what overhead.
func SummaryTable(title string, sums []Summary) *report.Table {
	t := &report.Table{Title: title, Columns: []string{
		"scheme", "runs >= 95% recovered", "median overhead", "mean overhead", "median recovered", "worst recovered", "median delay p99", "mismatches",
	}}
	for _, s := range sums {
		_ = t.AddRow(s.Label, fmt.Sprintf("%d/%d", s.RunsRecovered, s.Runs), pct(s.MedianOverhead), pct(s.MeanOverhead),
			pct(s.MedianRecovered), pct(s.MinRecovered), packets(s.MedianDelayP99), strconv.FormatInt(s.Mismatches+s.DecodeErrors, 10))
	}
	return t
}

// CSVTable flattens sweeps into one row per run, for CSV files.
func CSVTable(sweeps map[string][]PointResult, order []string) *report.Table {
	t := &report.Table{Columns: []string{
		"sweep", "point", "loss", "loss_mean", "scheme", "label", "packets", "seed", "overhead", "recovered_ratio",
		"residual_loss", "recovery_delay_p50", "recovery_delay_p99", "decode_ns_per_packet", "lost", "recovered",
		"repairs_sent", "sources_sent", "feedback_reports", "mismatches", "decode_errors",
	}}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, name := range order {
		for _, p := range sweeps[name] {
			for _, r := range p.Results {
				_ = t.AddRow(name, p.Point.Name, r.Loss, f(r.LossMean), r.Scheme, r.Label, strconv.Itoa(r.Packets),
					strconv.FormatUint(r.Seed, 10), f(r.Overhead), f(r.RecoveredRatio), f(r.ResidualLoss),
					f(r.RecoveryDelayP50), f(r.RecoveryDelayP99), f(r.DecodeNsPerPacket), i(r.Lost), i(r.Recovered),
					i(r.RepairsSent), i(r.SourcesSent), i(r.FeedbackReports), i(r.Mismatches), i(r.DecodeErrors))
			}
		}
	}
	return t
}

// perScheme collects, for each scheme of a sweep, one value per point.
func perScheme(points []PointResult, value func(Point, Result) (x, y float64)) []report.Series {
	if len(points) == 0 {
		return nil
	}
	series := make([]report.Series, len(points[0].Results))
	for si := range series {
		series[si].Name = points[0].Results[si].Label
		for _, p := range points {
			x, y := value(p.Point, p.Results[si])
			series[si].X = append(series[si].X, x)
			series[si].Y = append(series[si].Y, y)
		}
	}
	return series
}

// Axis ranges with a little room above 100% and a CDF's 1, so that a
// curve along the top stays visible.
var (
	recoveredRange = report.Range{Min: 0, Max: 103}
	cdfRange       = report.Range{Min: 0, Max: 1.03}
)

// UniformPanels are figure 10: overhead and recovered ratio against the
// uniform loss rate, in percent.
func UniformPanels(points []PointResult) []report.Panel {
	return []report.Panel{
		{
			Title: "Uniform loss: overhead", XLabel: "loss rate (%)", YLabel: "overhead (repairs per source, %)",
			Series:     perScheme(points, func(p Point, r Result) (float64, float64) { return p.X * 100, r.Overhead * 100 }),
			LegendLeft: true,
		},
		{
			Title: "Uniform loss: recovered", XLabel: "loss rate (%)", YLabel: "recovered / lost (%)",
			Series:       perScheme(points, func(p Point, r Result) (float64, float64) { return p.X * 100, r.RecoveredRatio * 100 }),
			Y:            recoveredRange,
			LegendLeft:   true,
			LegendBottom: true,
		},
	}
}

// GEPanels are figure 11a: CDFs over the Gilbert-Elliott design of the
// overhead and of the recovered ratio.
func GEPanels(points []PointResult) []report.Panel {
	return []report.Panel{
		{
			Title: fmt.Sprintf("Gilbert-Elliott, %d points: overhead", len(points)), XLabel: "overhead (%)", YLabel: "CDF of runs",
			Kind:         report.CDF,
			Series:       perScheme(points, func(_ Point, r Result) (float64, float64) { return 0, r.Overhead * 100 }),
			Y:            cdfRange,
			LegendBottom: true,
		},
		{
			Title: fmt.Sprintf("Gilbert-Elliott, %d points: recovered", len(points)), XLabel: "recovered / lost (%)", YLabel: "CDF of runs",
			Kind:       report.CDF,
			Series:     perScheme(points, func(_ Point, r Result) (float64, float64) { return 0, r.RecoveredRatio * 100 }),
			X:          recoveredRange,
			Y:          cdfRange,
			LegendLeft: true,
		},
	}
}

// TradeoffPanel places each run as a point, overhead against recovered
// ratio: figure 11b for the Starlink fit, or any set of runs.
func TradeoffPanel(title string, runs []Result) report.Panel {
	series := make([]report.Series, len(runs))
	maxOverhead := 0.0
	for i, r := range runs {
		series[i] = report.Series{Name: r.Label, X: []float64{r.Overhead * 100}, Y: []float64{r.RecoveredRatio * 100}}
		maxOverhead = max(maxOverhead, r.Overhead*100)
	}
	return report.Panel{
		Title: title, XLabel: "overhead (%)", YLabel: "recovered / lost (%)",
		Kind: report.Points, Series: series,
		X: report.Range{Min: 0, Max: maxOverhead*1.1 + 0.5}, Y: recoveredRange,
		LegendLeft: true, LegendBottom: true,
	}
}
