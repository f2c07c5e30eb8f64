package load

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Result is what a run measured. Its JSON form is the contract of
// "satquic load --json": scripts may rely on requests_per_second,
// connections_per_second, errors and latency_ms (p50, p90, p99, p999).
type Result struct {
	URL     string `json:"url"`
	Workers int    `json:"concurrency"`
	NewConn bool   `json:"new_conn"`
	// SharedConns is how many connections the workers shared (0 with
	// NewConn).
	SharedConns   int     `json:"shared_connections"`
	WarmupSeconds float64 `json:"warmup_seconds"`
	// Seconds is the measured time: to the end of the last request, or
	// the Duration.
	Seconds float64 `json:"seconds"`

	// Requests counts the requests that ended, with or without error,
	// Succeeded those with a 2xx status and the whole expected body.
	Requests  int64 `json:"requests"`
	Succeeded int64 `json:"succeeded"`
	// Unfinished counts the requests still under way when Duration
	// ended, which the other counts leave out.
	Unfinished int64 `json:"unfinished"`
	// RequestsPerSecond counts successful requests only.
	RequestsPerSecond float64 `json:"requests_per_second"`
	// Connections is how many connections were opened during the
	// measured time.
	Connections          int64   `json:"connections"`
	ConnectionsPerSecond float64 `json:"connections_per_second"`
	// ConnectionsEarly counts those dialed in 0-RTT, resuming a session
	// whose ticket allows it (Options.Resume).
	ConnectionsEarly int64 `json:"connections_0rtt"`
	// Bytes counts the response body bytes received in the measured
	// time, those of the requests cut off at its end included.
	Bytes          int64   `json:"bytes"`
	BytesPerSecond float64 `json:"bytes_per_second"`
	Mbps           float64 `json:"mbit_per_second"`

	// Errors is the number of failed requests; ErrorsByKind splits it
	// (see the Kind constants and status_NNN) and ErrorExamples holds
	// the first message of each kind.
	Errors        int64             `json:"errors"`
	ErrorsByKind  map[string]int64  `json:"errors_by_kind"`
	ErrorExamples map[string]string `json:"error_examples,omitempty"`

	// LatencyMs is the time of successful requests, from sending to the
	// last byte of the body, connection setup included with NewConn.
	LatencyMs      Latency `json:"latency_ms"`
	LatencySamples int64   `json:"latency_samples"`
}

// Latency holds latency statistics in milliseconds.
type Latency struct {
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p999"`
	Max    float64 `json:"max"`
}

// Kinds returns the error kinds of the result, most frequent first.
func (r *Result) Kinds() []string {
	kinds := make([]string, 0, len(r.ErrorsByKind))
	for k := range r.ErrorsByKind {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int {
		if d := r.ErrorsByKind[b] - r.ErrorsByKind[a]; d != 0 {
			if d > 0 {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	return kinds
}

func fmtMs(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// WriteText writes the result for a terminal.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	mode := fmt.Sprintf("%d shared connection", r.SharedConns)
	if r.SharedConns != 1 {
		mode += "s"
	}
	if r.NewConn {
		mode = "a new connection per request"
	}
	workers := "workers"
	if r.Workers == 1 {
		workers = "worker"
	}
	fmt.Fprintf(&b, "%s: %d %s, %s, %.2f s measured", r.URL, r.Workers, workers, mode, r.Seconds)
	if r.WarmupSeconds > 0 {
		fmt.Fprintf(&b, " after %.2f s of warm-up", r.WarmupSeconds)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  requests      %d (%d succeeded, %d failed; %d cut off at the end)\n", r.Requests, r.Succeeded, r.Errors, r.Unfinished)
	fmt.Fprintf(&b, "  requests/s    %.1f\n", r.RequestsPerSecond)
	fmt.Fprintf(&b, "  connections/s %.1f (%d opened", r.ConnectionsPerSecond, r.Connections)
	if r.ConnectionsEarly > 0 {
		fmt.Fprintf(&b, ", %d in 0-RTT", r.ConnectionsEarly)
	}
	b.WriteString(")\n")
	fmt.Fprintf(&b, "  transfer      %s/s, %.2f Mbit/s (%s of bodies)\n", humanBytes(r.BytesPerSecond), r.Mbps, humanBytes(float64(r.Bytes)))
	l := r.LatencyMs
	fmt.Fprintf(&b, "  latency ms    p50 %s  p90 %s  p99 %s  p99.9 %s  (min %s, mean %s, max %s)\n",
		fmtMs(l.P50), fmtMs(l.P90), fmtMs(l.P99), fmtMs(l.P999), fmtMs(l.Min), fmtMs(l.Mean), fmtMs(l.Max))
	if r.Errors == 0 {
		b.WriteString("  errors        none\n")
	}
	for i, k := range r.Kinds() {
		head := "  errors        "
		if i > 0 {
			head = "                "
		}
		fmt.Fprintf(&b, "%s%s: %d (first: %s)\n", head, k, r.ErrorsByKind[k], r.ErrorExamples[k])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// humanBytes writes a byte count with a decimal unit.
func humanBytes(v float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " " + units[i]
}
