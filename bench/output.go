package bench

import (
	"fmt"
	"io"
	"strconv"

	"github.com/satquic/satquic/internal/report"
)

// Document is the JSON file of a download experiment: the summaries under
// results, every download under runs, and what it takes to reproduce them
// under metadata.
type Document struct {
	Metadata Metadata    `json:"metadata"`
	Results  []Result    `json:"results"`
	Runs     []RunRecord `json:"runs"`
}

// NewDocument puts an outcome together with its metadata, completing the
// emulator's part of it.
func NewDocument(m Metadata, o *Outcome) Document {
	m.Emulator.HighPriority = o.HighPriority && len(o.Runs) > 0
	m.Emulator.LatePackets = 0
	for _, r := range o.Runs {
		m.Emulator.LatePackets += r.Late
	}
	return Document{Metadata: m, Results: o.Results, Runs: o.Runs}
}

// WriteJSON writes the document as indented JSON.
func (d Document) WriteJSON(w io.Writer) error { return report.WriteJSON(w, d) }

func secs(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// Table is the summary table: one row per stack and size.
func (d Document) Table() *report.Table {
	p := d.Metadata.Profile
	t := &report.Table{
		Title: fmt.Sprintf("Download completion time (s), profile %s: down %s, up %s; RTT %v ms; %d runs, seed %d",
			p.Name, linkText(p.Down), linkText(p.Up), p.RTTMs, d.Metadata.Runs, d.Metadata.Seed),
		Columns: []string{"stack", "size", "runs", "median", "p90", "p99", "min", "max", "limit", "median/limit", "Mbit/s"},
	}
	for _, r := range d.Results {
		ratio := "-"
		if r.MedianRatio > 0 {
			ratio = strconv.FormatFloat(r.MedianRatio, 'f', 2, 64) + "x"
		}
		median, goodput := secs(r.MedianS), strconv.FormatFloat(r.MedianGoodputMbps, 'f', 1, 64)
		if r.MedianTimedOut() {
			// The median run did not finish: its time is at least the
			// timeout, its goodput at most what that gives.
			median, goodput = ">"+median, "<"+strconv.FormatFloat(Goodput(r.SizeBytes, r.MedianS), 'f', 1, 64)
			ratio = ">" + ratio
		}
		// AddRow only fails on a row of the wrong width, which this is not.
		_ = t.AddRow(r.Stack, FormatSize(r.SizeBytes), strconv.Itoa(r.Runs), median, secs(r.P90S),
			secs(r.P99S), secs(r.MinS), secs(r.MaxS), secs(r.LimitS), ratio, goodput)
	}
	return t
}

func linkText(l LinkInfo) string {
	rate := "unlimited"
	if l.RateBps > 0 {
		rate = strconv.FormatFloat(l.RateBps/1e6, 'g', 4, 64) + " Mbit/s"
	}
	return fmt.Sprintf("%s, %v ms, loss %s", rate, l.DelayMs, l.Loss)
}

// WriteText writes the table and, under it, how each stack's limit is
// computed.
func (d Document) WriteText(w io.Writer) error {
	if err := d.Table().WriteText(w); err != nil {
		return err
	}
	for _, s := range d.Metadata.Stacks {
		if _, err := fmt.Fprintf(w, "limit %s: %s\n", s.Name, s.LimitFormula); err != nil {
			return err
		}
	}
	for _, r := range d.Results {
		if r.TimedOut == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "%s %s: %d of %d runs timed out and count as their timeout: its figures are lower bounds\n",
			r.Stack, FormatSize(r.SizeBytes), r.TimedOut, r.Runs); err != nil {
			return err
		}
	}
	return nil
}

// RunsTable has one row per download, for --csv.
func (d Document) RunsTable() *report.Table {
	t := &report.Table{Columns: []string{"run", "stack", "size_bytes", "seed", "seconds", "limit_s",
		"over_limit", "goodput_mbps", "timed_out", "down_lost", "up_lost", "queue_drops", "late", "detail"}}
	for _, r := range d.Runs {
		_ = t.AddRow(strconv.Itoa(r.Run), r.Stack, strconv.FormatInt(r.SizeBytes, 10),
			strconv.FormatUint(r.Seed, 10), strconv.FormatFloat(r.Seconds, 'f', 6, 64),
			strconv.FormatFloat(r.LimitS, 'f', 6, 64), strconv.FormatFloat(ratio(r.Seconds, r.LimitS), 'f', 4, 64),
			strconv.FormatFloat(r.GoodputMbps, 'f', 3, 64), strconv.FormatBool(r.TimedOut),
			strconv.FormatInt(r.DownLost, 10), strconv.FormatInt(r.UpLost, 10),
			strconv.FormatInt(r.QueueDrops, 10), strconv.FormatUint(r.Late, 10), r.Detail)
	}
	return t
}
