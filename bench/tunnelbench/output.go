//go:build linux

package tunnelbench

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/internal/report"
)

// Document is what --json writes: the results, and how they were made.
type Document struct {
	Experiment string   `json:"experiment"`
	Command    []string `json:"command"`
	Version    string   `json:"satquic_version"`
	Profile    string   `json:"profile"`
	Seed       uint64   `json:"seed"`
	Parallel   int      `json:"parallel"`
	GapS       float64  `json:"gap_s"`
	FixedRate  string   `json:"tunnel_fixed_rate"` // sources:repairs of tunnel-fixed
	// InnerTCPCongestionControl is the congestion control of the inner
	// HTTP client's and server's sockets: Config.InnerCC, else the
	// kernel's default (the namespaces inherit the host's). Its pacing
	// decides how fast a kept-alive connection's responses leave (BBR's,
	// once its startup ends, about a round trip per 10 kB response).
	InnerTCPCongestionControl string            `json:"inner_tcp_congestion_control,omitempty"`
	Machine                   bench.MachineInfo `json:"machine"`
	Results                   []Result          `json:"results"`
}

// DefaultTCPCongestionControl reads the kernel's default TCP congestion
// control ("" where it cannot be read).
func DefaultTCPCongestionControl() string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// WriteJSON writes d as indented JSON.
func (d Document) WriteJSON(w io.Writer) error { return report.WriteJSON(w, d) }

func secs(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// Table is one row per link, stack and size.
func Table(rs []Result) *report.Table {
	t := &report.Table{
		Title: "Request completion time (s) through the emulated link",
		Columns: []string{"link", "stack", "size", "requests", "failed", "p25", "p50", "p75", "p99", "p99.9", "max",
			"p99 excess", "overhead", "fec overhead", "rebuilt", "drops (queue)", "late"},
	}
	for _, r := range rs {
		excess := "-"
		if r.ExcessP99S != nil {
			excess = secs(*r.ExcessP99S)
		}
		rebuilt, fecOverhead := "-", "-"
		if r.Stack != Direct {
			rebuilt = strconv.FormatUint(r.FEC.Recovered+r.FEC.RecoveredByPeer, 10)
			fecOverhead = fmt.Sprintf("%.1f%%", 100*r.FECOverhead)
		}
		_ = t.AddRow(r.Link, r.Stack, bench.FormatSize(r.SizeBytes), strconv.Itoa(r.Requests), strconv.Itoa(r.Failed),
			secs(r.P25S), secs(r.P50S), secs(r.P75S), secs(r.P99S), secs(r.P999S), secs(r.MaxS), excess,
			fmt.Sprintf("%.1f%%", 100*r.Overhead), fecOverhead, rebuilt,
			fmt.Sprintf("%d (%d)", r.LinkDrops, r.QueueDrops), strconv.FormatUint(r.LatePackets, 10))
	}
	return t
}

// Figure draws, for each size, the CDF of the completion times of every
// stack over the lossy link on a logarithmic time axis, where the tail
// the FEC shortens shows.
func Figure(rs []Result, title string) (report.Figure, error) {
	var sizes []int64
	for _, r := range rs {
		if !slices.Contains(sizes, r.SizeBytes) {
			sizes = append(sizes, r.SizeBytes)
		}
	}
	f := report.Figure{Columns: min(2, len(sizes)), PanelWidth: 16, PanelHeight: 10}
	for _, size := range sizes {
		p := report.Panel{
			Title:  fmt.Sprintf("%s, %s: CDF of request completion time", title, bench.FormatSize(size)),
			XLabel: "seconds (log)", YLabel: "fraction of requests",
			Kind: report.CDF, LogX: true, LegendBottom: true,
		}
		for _, r := range rs {
			if r.SizeBytes != size {
				continue
			}
			name := r.Stack
			if r.Link == LinkLossless {
				name += " (lossless)"
			}
			p.Series = append(p.Series, report.Series{Name: name, Y: r.TimesS})
		}
		f.Panels = append(f.Panels, p)
	}
	if len(f.Panels) == 0 {
		return f, fmt.Errorf("no result to plot")
	}
	return f, nil
}

// TailSummary is one line on what the slowest requests of r met on the
// link, and the inner TCP's and the tunnel's recoveries during the run.
func TailSummary(r Result) string {
	causes := make([]string, 0, len(r.TailCauses))
	for _, c := range []string{"outage", "loss", "queue", "none"} {
		if n := r.TailCauses[c]; n > 0 {
			causes = append(causes, fmt.Sprintf("%d %s", n, c))
		}
	}
	line := fmt.Sprintf("slowest %d: %s; inner TCP timeouts %d/%d, retransmitted segments %d/%d (client/server)",
		len(r.Slowest), strings.Join(causes, ", "), r.ClientTCP.Timeouts, r.ServerTCP.Timeouts,
		r.ClientTCP.RetransSegs, r.ServerTCP.RetransSegs)
	if r.Stack != Direct {
		line += fmt.Sprintf("; tunnel repairs on loss %d (client probes %d), overdue packets %d, given up %d",
			r.FEC.LossRepairsSent+r.FEC.ServerLossRepairsSent, r.FEC.RepairProbesSent,
			r.FEC.OverdueSources+r.FEC.ServerOverdueSources, r.FEC.LostSourcesGivenUp)
	}
	return line
}
