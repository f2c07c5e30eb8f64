package bench

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"time"

	"github.com/satquic/satquic/internal/report"
)

// BulkResult summarizes one stack's downloads.
type BulkResult struct {
	Stack      string  `json:"stack"`
	Runs       int     `json:"runs"`
	MedianMbps float64 `json:"median_mbps"`
	MinMbps    float64 `json:"min_mbps"`
	MaxMbps    float64 `json:"max_mbps"`
	// Ratio is the median over quic-go's median, when quic-go ran.
	Ratio float64 `json:"ratio_to_quic_go,omitempty"`
	// CPUNsPerByte is the median processor time of both ends per byte.
	CPUNsPerByte float64 `json:"cpu_ns_per_byte"`
}

// Summarize fills Results from Runs, in the order the stacks first ran,
// and the ratios to quic-go of Results and Idle.
func (o *BulkOutcome) Summarize() {
	o.Results = nil
	var order []string
	goodput, cpu := map[string][]float64{}, map[string][]float64{}
	for _, r := range o.Runs {
		if _, ok := goodput[r.Stack]; !ok {
			order = append(order, r.Stack)
		}
		goodput[r.Stack] = append(goodput[r.Stack], r.GoodputMbps)
		cpu[r.Stack] = append(cpu[r.Stack], r.CPUNsPerByte())
	}
	for _, s := range order {
		sum := Summarize(goodput[s])
		o.Results = append(o.Results, BulkResult{
			Stack: s, Runs: len(goodput[s]), MedianMbps: sum.Median, MinMbps: sum.Min, MaxMbps: sum.Max,
			CPUNsPerByte: Summarize(cpu[s]).Median,
		})
	}
	for i := range o.Results {
		for _, q := range o.Results {
			if q.Stack == BulkQuicgo && q.MedianMbps > 0 {
				o.Results[i].Ratio = o.Results[i].MedianMbps / q.MedianMbps
			}
		}
	}
	for i := range o.Idle {
		for _, q := range o.Idle {
			if q.Stack == BulkQuicgo && q.GoBytesPerConn > 0 {
				o.Idle[i].GoRatio = o.Idle[i].GoBytesPerConn / q.GoBytesPerConn
			}
		}
	}
}

// BulkMetadata is what a bulk result needs to be judged and reproduced.
type BulkMetadata struct {
	Experiment     string      `json:"experiment"`
	Command        []string    `json:"command,omitempty"`
	SatquicVersion string      `json:"satquic_version"`
	GoVersion      string      `json:"go_version"`
	QuicgoVersion  string      `json:"quic_go_version,omitempty"`
	Date           string      `json:"date"`
	SizeBytes      int64       `json:"size_bytes"`
	Runs           int         `json:"runs"`
	IdleConns      int         `json:"idle_conns,omitempty"`
	Busy           bool        `json:"busy"`
	Stacks         []string    `json:"stacks"`
	Machine        MachineInfo `json:"machine"`
	// Method says how goodput and idle memory are measured.
	Method string `json:"method"`
}

// bulkMethod is BulkMetadata.Method.
const bulkMethod = "each download: a fresh server and client process per stack on 127.0.0.1, GOMAXPROCS unchanged; " +
	"goodput = body bytes x 8 / time from the client's request to the last byte; " +
	"CPU = user + system time of both processes, start to end, per body byte. " +
	"idle: the server's live Go heap objects + goroutine stacks (and VmRSS) after debug.FreeOSMemory, " +
	"with N connections of the stack's own client held idle for 3 s, less the same without connections, divided by the number the server held (at least 99% of N)"

// NewBulkMetadata describes an experiment run now, on this machine.
func NewBulkMetadata(cfg BulkConfig, version, quicgoVersion string, args []string) BulkMetadata {
	m := BulkMetadata{
		Experiment: "bulk", Command: args, SatquicVersion: version, GoVersion: runtime.Version(),
		QuicgoVersion: quicgoVersion, Date: time.Now().UTC().Format(time.RFC3339),
		SizeBytes: cfg.Size, Runs: cfg.Runs, IdleConns: cfg.IdleConns, Busy: len(cfg.Busy) > 0,
		Machine: Machine(), Method: bulkMethod,
	}
	for _, p := range cfg.Programs {
		m.Stacks = append(m.Stacks, p.Stack)
	}
	return m
}

// BulkDocument is the JSON file of a bulk experiment.
type BulkDocument struct {
	Metadata BulkMetadata `json:"metadata"`
	*BulkOutcome
}

// WriteJSON writes the document as indented JSON.
func (d BulkDocument) WriteJSON(w io.Writer) error { return report.WriteJSON(w, d) }

func ratioCell(v float64) string {
	if v <= 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "x"
}

func mbps(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// GoodputTable has a row per stack.
func (d BulkDocument) GoodputTable() *report.Table {
	busy := ""
	if d.Metadata.Busy {
		busy = ", one core kept busy"
	}
	t := &report.Table{
		Title: fmt.Sprintf("Bulk goodput (Mbit/s), one connection on loopback, %s per download, %d runs%s; GOMAXPROCS %d of %d cores",
			FormatSize(d.Metadata.SizeBytes), d.Metadata.Runs, busy, d.Metadata.Machine.GOMAXPROCS, d.Metadata.Machine.Cores),
		Columns: []string{"stack", "runs", "median", "min", "max", "median/quic-go", "CPU ns/B"},
	}
	for _, r := range d.Results {
		// AddRow fails only on a row of the wrong width.
		_ = t.AddRow(r.Stack, strconv.Itoa(r.Runs), mbps(r.MedianMbps), mbps(r.MinMbps), mbps(r.MaxMbps), ratioCell(r.Ratio),
			strconv.FormatFloat(r.CPUNsPerByte, 'f', 2, 64))
	}
	return t
}

// IdleTable has a row per stack measured idle.
func (d BulkDocument) IdleTable() *report.Table {
	t := &report.Table{
		Title:   fmt.Sprintf("Server memory per idle connection (bytes), %d connections", d.Metadata.IdleConns),
		Columns: []string{"stack", "Go heap+stacks", "RSS", "Go/quic-go", "open (s)"},
	}
	for _, r := range d.Idle {
		_ = t.AddRow(r.Stack, strconv.FormatFloat(r.GoBytesPerConn, 'f', 0, 64),
			strconv.FormatFloat(r.RSSBytesPerConn, 'f', 0, 64), ratioCell(r.GoRatio), strconv.FormatFloat(r.OpenS, 'f', 1, 64))
	}
	return t
}

// WriteText writes the tables.
func (d BulkDocument) WriteText(w io.Writer) error {
	if len(d.Results) > 0 {
		if err := d.GoodputTable().WriteText(w); err != nil {
			return err
		}
	}
	if len(d.Idle) > 0 {
		if len(d.Results) > 0 {
			fmt.Fprintln(w)
		}
		return d.IdleTable().WriteText(w)
	}
	return nil
}
