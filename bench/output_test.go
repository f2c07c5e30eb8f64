package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/satquic/satquic/internal/report"
	"github.com/satquic/satquic/netsim"
)

// fakeDocument runs the experiment loop on the fakes: 3 runs, two sizes,
// two stacks.
func fakeDocument(t *testing.T) Document {
	t.Helper()
	cfg, _ := fakeConfig(&eventLog{}, 3, []int64{1e6, 10e6}, "a", "b")
	out, err := RunDownload(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return NewDocument(NewMetadata(cfg, "test", []string{"satquic", "bench", "download"}), out)
}

func TestDocumentText(t *testing.T) {
	doc := fakeDocument(t)
	var b bytes.Buffer
	if err := doc.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"profile tiny", "3 runs, seed 42", "median/limit",
		"\na      1MB      3", "\nb      10MB     3",
		"limit a: 2 RTT (1 handshake + 1 request) + 8*size/rate, RTT 20ms, rate 8 Mbit/s",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	if doc.Metadata.Emulator.LatePackets != 0 || !doc.Metadata.Emulator.HighPriority {
		t.Errorf("emulator info %+v", doc.Metadata.Emulator)
	}
}

func TestDocumentCSV(t *testing.T) {
	doc := fakeDocument(t)
	var b bytes.Buffer
	if err := doc.RunsTable().WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+12 || rows[0][4] != "seconds" || rows[1][1] != "a" || rows[1][2] != "1000000" {
		t.Errorf("CSV rows %q", rows[:2])
	}
}

func TestDocumentFigure(t *testing.T) {
	doc := fakeDocument(t)
	g, err := doc.Figure()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Cells) != 4 || g.Columns != 2 {
		t.Fatalf("%d cells in %d columns, want a box panel and a CDF per size", len(g.Cells), g.Columns)
	}
	box, ok := g.Cells[2].(report.BoxPanel)
	if !ok || len(box.Boxes) != 2 || box.Boxes[1].Name != "b" || len(box.Boxes[1].Values) != 3 ||
		box.Boxes[1].Ref != Limit(tinyFakeProfile(), 1, 10e6).Seconds() {
		t.Errorf("10MB box panel %+v", g.Cells[2])
	}
	cdf, ok := g.Cells[3].(report.Panel)
	// Both stacks share a limit, drawn once after their CDFs.
	if !ok || cdf.Kind != report.CDF || len(cdf.Series) != 3 || cdf.Series[2].Name != "limit" ||
		cdf.X.Min >= cdf.Series[2].Y[0] {
		t.Errorf("10MB CDF panel %+v", g.Cells[3])
	}
	g.DPI = 40
	var b bytes.Buffer
	if err := g.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := (Document{}).Figure(); err == nil {
		t.Error("an empty document plotted")
	}
}

func tinyFakeProfile() netsim.Profile {
	cfg, _ := fakeConfig(&eventLog{}, 1, []int64{1}, "a")
	return cfg.Profile
}

func TestWritePlots(t *testing.T) {
	doc := fakeDocument(t)
	dir := filepath.Join(t.TempDir(), "plots")
	paths, err := doc.WritePlots(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"download.png", "download-1MB.png", "download-10MB.png"}
	if !slices.Equal(doc.PlotFiles(), want) || len(paths) != len(want) {
		t.Fatalf("plot files %v, paths %v; want %v", doc.PlotFiles(), paths, want)
	}
	for i, p := range paths {
		if filepath.Base(p) != want[i] {
			t.Errorf("path %s, want %s", p, want[i])
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		// The whole experiment has a row per size; a size's figure one.
		rows := 1
		if i == 0 {
			rows = 2
		}
		if h, w := img.Bounds().Dy(), img.Bounds().Dx(); w < 1000 || h < rows*350 || h > rows*500+100 {
			t.Errorf("%s: %dx%d pixels for %d rows", p, w, h, rows)
		}
	}
	g, err := doc.SizeFigure(10e6)
	if err != nil || len(g.Cells) != 2 || !strings.HasPrefix(g.Title, "10MB download completion time") {
		t.Errorf("10MB figure: %v, %d cells, title %q", err, len(g.Cells), g.Title)
	}
	if _, err := doc.SizeFigure(5e6); err == nil {
		t.Error("a figure of a size without results")
	}
	if _, err := (Document{}).WritePlots(dir); err == nil {
		t.Error("an empty document plotted")
	}
}

// TestCDFLegendRoom: the right margin of a CDF panel leaves the legend's
// width free of steps, for short and long names alike.
func TestCDFLegendRoom(t *testing.T) {
	for _, names := range [][]string{{"a"}, {"satquic", "quic-go", "limit"}, {"tcp-cubic", "limit satquic, quic-go", "limit tcp-cubic, tcp-bbr"}} {
		var series []report.Series
		longest := 0
		for _, n := range names {
			series = append(series, report.Series{Name: n})
			longest = max(longest, len(n))
		}
		const width = 15.0
		m := cdfRightMargin(series, width)
		// The share of the axis right of the last step, against the
		// share the legend takes of the plotting area.
		free := m / (1 + cdfLeftMargin + m)
		legend := (legendSampleCm + legendCharCm*float64(longest)) / (width - panelAxisCm)
		if free < legend || free > max(legend+0.1, 0.2) {
			t.Errorf("%q: right margin %.2f spans leaves %.2f of the axis for a legend of %.2f", names, m, free, legend)
		}
	}
}

// TestFigureLogAxes: a size whose slowest run is many times its limit gets
// logarithmic time axes; one whose runs sit near the limit keeps linear ones.
func TestFigureLogAxes(t *testing.T) {
	doc := Document{Results: []Result{
		{Stack: "a", SizeBytes: 1e6, SamplesS: []float64{0.9, 1, 4.2}, MinS: 0.9, MaxS: 4.2, LimitS: 0.36},
		{Stack: "a", SizeBytes: 2e6, SamplesS: []float64{0.9, 1, 1.2}, MinS: 0.9, MaxS: 1.2, LimitS: 0.5},
	}}
	doc.Metadata.Profile.Down.Loss, doc.Metadata.Profile.Up.Loss = "none", "none"
	g, err := doc.Figure()
	if err != nil {
		t.Fatal(err)
	}
	for i, wantLog := range []bool{true, false} {
		box := g.Cells[2*i].(report.BoxPanel)
		cdf := g.Cells[2*i+1].(report.Panel)
		if box.LogY != wantLog || cdf.LogX != wantLog {
			t.Errorf("row %d: log axes %v and %v, want %v", i, box.LogY, cdf.LogX, wantLog)
		}
		// The limit's step stays inside the axis, the legend's room on
		// its right.
		if cdf.X.Min <= 0 || cdf.X.Min >= doc.Results[i].LimitS || cdf.X.Max <= doc.Results[i].MaxS {
			t.Errorf("row %d: CDF axis %+v", i, cdf.X)
		}
	}
	g.DPI = 30
	if err := g.WritePNG(&bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
}
