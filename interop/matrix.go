//go:build linux

package interop

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Matrix is the result of a run: every cell, and what the run was.
type Matrix struct {
	Seed            uint64    `json:"seed"`
	Started         time.Time `json:"started"`
	Finished        time.Time `json:"finished"`
	Cases           []string  `json:"cases"`
	Implementations []string  `json:"implementations"`
	Results         []Result  `json:"results"`
	// Required lists the cells that had to pass (see Verdict) and did
	// not, once Verdict was called.
	Required []string `json:"required_failed"`
	OK       bool     `json:"ok"`
}

// Pair is a client and a server.
type Pair struct{ Client, Server string }

// reference is the peer whose own results say which cases are required.
const reference = "quic-go"

func (m *Matrix) result(c, client, server string) (Result, bool) {
	i := slices.IndexFunc(m.Results, func(r Result) bool { return r.Case == c && r.Client == client && r.Server == server })
	if i < 0 {
		return Result{}, false
	}
	return m.Results[i], true
}

// Verdict decides whether the run succeeded: every case that quic-go
// passes against itself must pass between satquic and itself, and between
// satquic and each peer in both roles, but for the failures whose cause was
// found outside satquic (knownIssues). A run without quic-go has no such
// reference, and then every cell with satquic that ran (was not
// unsupported) must pass.
func (m *Matrix) Verdict() bool {
	m.Required = nil
	hasRef := slices.Contains(m.Implementations, reference)
	for _, c := range m.Cases {
		if hasRef {
			if r, ok := m.result(c, reference, reference); !ok || r.Status != Pass {
				continue
			}
		}
		for _, r := range m.Results {
			if r.Case != c || (r.Client != "satquic" && r.Server != "satquic") || r.Status == Pass || r.Known != "" {
				continue
			}
			if !hasRef && r.Status == Unsupported {
				continue
			}
			m.Required = append(m.Required, fmt.Sprintf("%s %s->%s: %s", c, r.Client, r.Server, r.Status))
		}
	}
	m.OK = len(m.Required) == 0
	return m.OK
}

// columns are the cells of a case, in the order pairs gives.
func (m *Matrix) columns() []Pair {
	var out []Pair
	for _, r := range m.Results {
		p := Pair{r.Client, r.Server}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// short names for the table's headers.
var shortNames = map[string]string{"satquic": "sq", "quic-go": "qg", "ngtcp2": "ng"}

func shortName(n string) string {
	if s, ok := shortNames[n]; ok {
		return s
	}
	return n
}

// WriteTable prints the matrix: a row per case, a column per client and
// server (client first), then the reason of every failure and of every
// cell that did not run, and the verdict.
func (m *Matrix) WriteTable(w io.Writer) error {
	cols := m.columns()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "case\t")
	for _, p := range cols {
		fmt.Fprintf(tw, "%s>%s\t", shortName(p.Client), shortName(p.Server))
	}
	fmt.Fprintln(tw)
	for _, c := range m.Cases {
		fmt.Fprintf(tw, "%s\t", c)
		for _, p := range cols {
			cell := ""
			if r, ok := m.result(c, p.Client, p.Server); ok {
				cell = map[Status]string{Pass: "pass", Fail: "FAIL", Unsupported: "-"}[r.Status]
				if r.Known != "" {
					cell = "fail*"
				}
			}
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var legend []string
	for _, n := range m.Implementations {
		legend = append(legend, shortName(n)+" = "+n)
	}
	fmt.Fprintf(w, "\nclient>server; %s; \"-\" = unsupported; \"fail*\" = failed for a known cause outside satquic\n", strings.Join(legend, ", "))
	var failures []string
	for _, r := range m.Results {
		if r.Status != Fail {
			continue
		}
		line := fmt.Sprintf("  %s %s>%s: %s", r.Case, r.Client, r.Server, r.Reason)
		if r.Protocol != "" {
			line += " [" + r.Protocol + "]"
		}
		if r.Known != "" {
			line += "\n    known, outside satquic: " + r.Known
		}
		failures = append(failures, line)
	}
	if len(failures) > 0 {
		fmt.Fprintf(w, "\nFailures:\n%s\n", strings.Join(failures, "\n"))
	}
	// Cells that did not run, grouped by why.
	var reasons []string
	cells := map[string][]string{}
	for _, r := range m.Results {
		if r.Status != Unsupported {
			continue
		}
		if _, ok := cells[r.Reason]; !ok {
			reasons = append(reasons, r.Reason)
		}
		cells[r.Reason] = append(cells[r.Reason], fmt.Sprintf("%s %s>%s", r.Case, shortName(r.Client), shortName(r.Server)))
	}
	if len(reasons) > 0 {
		fmt.Fprintln(w, "\nNot run:")
		for _, why := range reasons {
			fmt.Fprintf(w, "  %s:\n    %s\n", why, strings.Join(cells[why], ", "))
		}
	}
	if m.OK {
		fmt.Fprintln(w, "\nOK: every case quic-go passes against itself passes with satquic on either side")
	} else {
		fmt.Fprintf(w, "\nNOT OK: %d required cells did not pass:\n  %s\n", len(m.Required), strings.Join(m.Required, "\n  "))
	}
	return nil
}

// WriteJSON writes the matrix to path as indented JSON.
func (m *Matrix) WriteJSON(path string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
