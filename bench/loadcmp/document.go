package loadcmp

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/internal/report"
)

// Metadata is what it takes to judge and repeat a result: versions, the
// machine, the parameters and how the servers ran.
type Metadata struct {
	Experiment     string            `json:"experiment"`
	Command        []string          `json:"command,omitempty"`
	SatquicVersion string            `json:"satquic_version"`
	GoVersion      string            `json:"go_version"`
	StackVersions  map[string]string `json:"stack_versions"`
	Dependencies   []string          `json:"dependencies,omitempty"`
	Date           string            `json:"date"`
	Machine        bench.MachineInfo `json:"machine"`
	Workers        int               `json:"concurrency"`
	Conns          int               `json:"shared_connections"`
	DurationS      float64           `json:"duration_s"`
	WarmupS        float64           `json:"warmup_s"`
	Runs           int               `json:"runs"`
	PayloadsBytes  []int64           `json:"payloads_bytes"`
	Stacks         []string          `json:"stacks"`
	// Setup says where the servers and the generator ran.
	Setup string `json:"setup"`
}

// Setup is the sentence Metadata.Setup holds.
const Setup = "loopback; each server a fresh child process per measurement with the machine's GOMAXPROCS, default QUIC and HTTP/3 settings (no FEC) but for satquic's limits on connections and handshakes per source, lifted so that the one generator is never refused, the same payload handler; " +
	"the load generator (satquic's HTTP/3 client, one UDP socket) in the bench process; requests/s over shared connections, new connections/s with a connection per request, each a full handshake (no session ticket, address validation token or 0-RTT; the certificate pinned by its SHA-256, its signature checked as TLS 1.3 requires)"

// NewMetadata describes an experiment run now, on this machine. versions
// maps each stack to the version of its code.
func NewMetadata(cfg Config, satquicVersion string, versions map[string]string, args []string) Metadata {
	m := Metadata{
		Experiment: "load", Command: args,
		SatquicVersion: satquicVersion, GoVersion: runtime.Version(), StackVersions: versions,
		Dependencies: dependencies(),
		Date:         time.Now().UTC().Format(time.RFC3339),
		Machine:      bench.Machine(),
		Workers:      cfg.Workers, Conns: max(cfg.Conns, 1), DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds(),
		Runs: cfg.Runs, PayloadsBytes: cfg.Payloads, Setup: Setup,
	}
	for _, s := range cfg.Servers {
		m.Stacks = append(m.Stacks, s.Name())
	}
	return m
}

// dependencies lists the modules built into this program, as path@version.
func dependencies() []string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var deps []string
	for _, d := range bi.Deps {
		deps = append(deps, d.Path+"@"+d.Version)
	}
	return deps
}

// Summary is the median of one measure, payload and stack over the runs.
type Summary struct {
	Measure      string  `json:"measure"`
	PayloadBytes int64   `json:"payload_bytes"`
	Stack        string  `json:"stack"`
	Runs         int     `json:"runs"`
	Median       float64 `json:"median_per_second"`
	Min          float64 `json:"min_per_second"`
	Max          float64 `json:"max_per_second"`
	P99Ms        float64 `json:"median_p99_ms"`
	// CPUPerOpUs is the median of the server's processor time per
	// request (per connection for new-connections), 0 if not metered.
	CPUPerOpUs float64 `json:"median_server_cpu_us_per_op"`
	// Errors counts the failed requests (or connections) of all the
	// runs, ErrorsByKind splits them as load.Result does (a server's
	// refusal, CONNECTION_REFUSED, counts as "connect") and
	// ErrorExamples holds the first message of each kind: a rate
	// measured while a server refused its client is not comparable.
	Errors        int64             `json:"errors"`
	ErrorsByKind  map[string]int64  `json:"errors_by_kind,omitempty"`
	ErrorExamples map[string]string `json:"error_examples,omitempty"`
}

// Comparison sets the first stack against the second for one measure
// and payload. The runs pair up (run r of each stack, measured one after
// the other) and the ratio is the median of the pairs' ratios: the two
// measurements of a pair share the machine's state, which on a busy
// machine moves more between runs than between stacks.
type Comparison struct {
	Measure      string `json:"measure"`
	PayloadBytes int64  `json:"payload_bytes"`
	// Stacks are the two compared, Stacks[0] over Stacks[1].
	Stacks [2]string `json:"stacks"`
	Pairs  int       `json:"pairs"`
	// RateRatio is the median of the paired ratios of requests/s (or
	// new connections/s); above 1, the first stack is faster.
	RateRatio float64 `json:"median_paired_rate_ratio"`
	// CPURatio is the same for the servers' CPU time per request; below
	// 1, the first stack costs less. 0 if not metered.
	CPURatio float64 `json:"median_paired_cpu_ratio"`
}

// Document is the JSON file of the experiment.
type Document struct {
	Metadata    Metadata     `json:"metadata"`
	Results     []Summary    `json:"results"`
	Comparisons []Comparison `json:"comparisons"`
	Samples     []Sample     `json:"runs"`
}

// NewDocument summarizes the samples.
func NewDocument(m Metadata, samples []Sample) Document {
	type key struct {
		measure string
		payload int64
		stack   string
	}
	groups := map[key][]Sample{}
	var order []key
	for _, s := range samples {
		k := key{s.Measure, s.PayloadBytes, s.Stack}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], s)
	}
	stackRank := map[string]int{}
	for i, s := range m.Stacks {
		stackRank[s] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.measure != b.measure {
			return a.measure == MeasureRequests
		}
		if a.payload != b.payload {
			return a.payload < b.payload
		}
		return stackRank[a.stack] < stackRank[b.stack]
	})
	d := Document{Metadata: m, Samples: samples}
	for _, k := range order {
		g := groups[k]
		rates := make([]float64, len(g))
		p99s := make([]float64, len(g))
		cpus := make([]float64, len(g))
		for i, s := range g {
			rates[i], p99s[i], cpus[i] = s.Rate(), s.Result.LatencyMs.P99, s.CPUPerOp()
		}
		slices.Sort(rates)
		sum := Summary{
			Measure: k.measure, PayloadBytes: k.payload, Stack: k.stack, Runs: len(g),
			Median: median(rates), Min: rates[0], Max: rates[len(rates)-1], P99Ms: median(p99s),
			CPUPerOpUs: median(cpus),
		}
		sum.addErrors(g)
		d.Results = append(d.Results, sum)
	}
	if len(m.Stacks) >= 2 {
		d.Comparisons = compare(samples, m.Stacks[0], m.Stacks[1])
	}
	return d
}

// addErrors sums the failures of the samples, by kind, keeping the first
// message of each kind.
func (sum *Summary) addErrors(samples []Sample) {
	for _, s := range samples {
		sum.Errors += s.Result.Errors
		for kind, n := range s.Result.ErrorsByKind {
			if n == 0 {
				continue
			}
			if sum.ErrorsByKind == nil {
				sum.ErrorsByKind, sum.ErrorExamples = map[string]int64{}, map[string]string{}
			}
			sum.ErrorsByKind[kind] += n
			if _, ok := sum.ErrorExamples[kind]; !ok {
				sum.ErrorExamples[kind] = s.Result.ErrorExamples[kind]
			}
		}
	}
}

// compare pairs the runs of stacks a and b for each measure and payload,
// in the order the samples came.
func compare(samples []Sample, a, b string) []Comparison {
	type key struct {
		measure string
		payload int64
		run     int
	}
	byRun := map[key]map[string]Sample{}
	for _, s := range samples {
		k := key{s.Measure, s.PayloadBytes, s.Run}
		if byRun[k] == nil {
			byRun[k] = map[string]Sample{}
		}
		byRun[k][s.Stack] = s
	}
	type cell struct {
		measure string
		payload int64
	}
	rates, cpus := map[cell][]float64{}, map[cell][]float64{}
	seen := map[cell]bool{}
	var order []cell
	for _, s := range samples {
		k := key{s.Measure, s.PayloadBytes, s.Run}
		pa, okA := byRun[k][a]
		pb, okB := byRun[k][b]
		if !okA || !okB || s.Stack != a {
			continue
		}
		c := cell{s.Measure, s.PayloadBytes}
		if !seen[c] {
			seen[c] = true
			order = append(order, c)
		}
		if pb.Rate() > 0 {
			rates[c] = append(rates[c], pa.Rate()/pb.Rate())
		}
		if pa.CPUPerOp() > 0 && pb.CPUPerOp() > 0 {
			cpus[c] = append(cpus[c], pa.CPUPerOp()/pb.CPUPerOp())
		}
	}
	out := make([]Comparison, 0, len(order))
	for _, c := range order {
		out = append(out, Comparison{
			Measure: c.measure, PayloadBytes: c.payload, Stacks: [2]string{a, b},
			Pairs: len(rates[c]), RateRatio: median(rates[c]), CPURatio: median(cpus[c]),
		})
	}
	return out
}

// median of a slice; it sorts a copy.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// WriteJSON writes the document as indented JSON.
func (d Document) WriteJSON(w io.Writer) error { return report.WriteJSON(w, d) }

// Table is the side-by-side table: one row per measure and payload, a
// column per stack (the median over the runs), and the ratio of the first
// stack to the second (the median of the paired runs' ratios).
func (d Document) Table() *report.Table {
	m := d.Metadata
	t := &report.Table{
		Title: fmt.Sprintf("HTTP/3 load, %d concurrent over %d connection(s), %g s per measurement (%g s warm-up), median of %d run(s); %s, %d cores",
			m.Workers, m.Conns, m.DurationS, m.WarmupS, m.Runs, m.Machine.CPUModel, m.Machine.Cores),
		Columns: []string{"measure", "payload"},
	}
	t.Columns = append(t.Columns, m.Stacks...)
	ratio := len(m.Stacks) >= 2
	if ratio {
		t.Columns = append(t.Columns, m.Stacks[0]+"/"+m.Stacks[1])
	}
	type row struct {
		measure string
		payload int64
	}
	comparisons := map[row]Comparison{}
	for _, c := range d.Comparisons {
		comparisons[row{c.Measure, c.PayloadBytes}] = c
	}
	for _, s := range m.Stacks {
		t.Columns = append(t.Columns, s+" CPU µs")
	}
	for _, s := range m.Stacks {
		t.Columns = append(t.Columns, s+" p99 ms")
	}
	for _, s := range m.Stacks {
		t.Columns = append(t.Columns, s+" errors")
	}
	cells := map[row]map[string]Summary{}
	var rows []row
	for _, r := range d.Results {
		k := row{r.Measure, r.PayloadBytes}
		if cells[k] == nil {
			cells[k] = map[string]Summary{}
			rows = append(rows, k)
		}
		cells[k][r.Stack] = r
	}
	for _, k := range rows {
		name := "requests/s"
		if k.measure == MeasureConnections {
			name = "new connections/s"
		}
		out := []string{name, FormatPayload(k.payload)}
		for _, s := range m.Stacks {
			c, ok := cells[k][s]
			out = append(out, rateCell(c.Median, ok))
		}
		if ratio {
			cell := "-"
			if c, ok := comparisons[k]; ok && c.Pairs > 0 {
				cell = strconv.FormatFloat(c.RateRatio, 'f', 2, 64) + "x"
			}
			out = append(out, cell)
		}
		for _, s := range m.Stacks {
			c, ok := cells[k][s]
			cell := "-"
			if ok && c.CPUPerOpUs > 0 {
				cell = strconv.FormatFloat(c.CPUPerOpUs, 'f', 1, 64)
			}
			out = append(out, cell)
		}
		for _, s := range m.Stacks {
			c, ok := cells[k][s]
			cell := "-"
			if ok {
				cell = strconv.FormatFloat(c.P99Ms, 'f', 2, 64)
			}
			out = append(out, cell)
		}
		for _, s := range m.Stacks {
			c, ok := cells[k][s]
			cell := "-"
			if ok {
				cell = strconv.FormatInt(c.Errors, 10)
			}
			out = append(out, cell)
		}
		_ = t.AddRow(out...)
	}
	return t
}

func rateCell(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// WriteText writes the table and the versions under it.
func (d Document) WriteText(w io.Writer) error {
	if err := d.Table().WriteText(w); err != nil {
		return err
	}
	m := d.Metadata
	line := fmt.Sprintf("satquic %s, %s", m.SatquicVersion, m.GoVersion)
	for _, s := range m.Stacks {
		if v := m.StackVersions[s]; v != "" && s != "satquic" {
			line += fmt.Sprintf(", %s %s", s, v)
		}
	}
	_, err := fmt.Fprintf(w, "%s\nsetup: %s\nratio: the median over the runs of the paired ratio (each run measures both stacks one after the other)\nCPU µs: the server's processor time (user and system) per request, or per new connection, while measured\nerrors: failed requests of all the runs, by stack; a rate measured with errors (a server refusing connections counts as connect) is not comparable\n", line, m.Setup)
	if err != nil {
		return err
	}
	return d.writeErrorKinds(w)
}

// writeErrorKinds lists, for every summary with failures, their kinds
// and the first message of each, so that a server's refusals show under
// the figure they lowered.
func (d Document) writeErrorKinds(w io.Writer) error {
	for _, r := range d.Results {
		if r.Errors == 0 {
			continue
		}
		kinds := make([]string, 0, len(r.ErrorsByKind))
		for k := range r.ErrorsByKind {
			kinds = append(kinds, k)
		}
		slices.SortFunc(kinds, func(a, b string) int {
			if c := cmp.Compare(r.ErrorsByKind[b], r.ErrorsByKind[a]); c != 0 {
				return c
			}
			return strings.Compare(a, b)
		})
		if _, err := fmt.Fprintf(w, "errors of %s, %s %s: %d\n", r.Stack, r.Measure, FormatPayload(r.PayloadBytes), r.Errors); err != nil {
			return err
		}
		for _, k := range kinds {
			if _, err := fmt.Fprintf(w, "  %s: %d (first: %s)\n", k, r.ErrorsByKind[k], r.ErrorExamples[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// RunsTable has one row per measurement, for --csv.
func (d Document) RunsTable() *report.Table {
	t := &report.Table{Columns: []string{"run", "stack", "measure", "payload_bytes", "seconds", "requests",
		"succeeded", "errors", "connections", "requests_per_second", "connections_per_second", "mbit_per_second",
		"p50_ms", "p90_ms", "p99_ms", "p999_ms", "server_cpu_s", "server_cpu_us_per_op"}}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	for _, s := range d.Samples {
		r := s.Result
		_ = t.AddRow(strconv.Itoa(s.Run), s.Stack, s.Measure, strconv.FormatInt(s.PayloadBytes, 10), f(r.Seconds),
			strconv.FormatInt(r.Requests, 10), strconv.FormatInt(r.Succeeded, 10), strconv.FormatInt(r.Errors, 10),
			strconv.FormatInt(r.Connections, 10), f(r.RequestsPerSecond), f(r.ConnectionsPerSecond), f(r.Mbps),
			f(r.LatencyMs.P50), f(r.LatencyMs.P90), f(r.LatencyMs.P99), f(r.LatencyMs.P999),
			f(s.ServerCPUSeconds), f(s.CPUPerOp()))
	}
	return t
}
