//go:build linux

package interop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Status is the result of one cell: a case between a client and a server.
type Status string

// The statuses, as the runner names them.
const (
	Pass        Status = "pass"
	Fail        Status = "fail"
	Unsupported Status = "unsupported"
)

// Result is one cell of the matrix.
type Result struct {
	Case   string `json:"case"`
	Client string `json:"client"`
	Server string `json:"server"`
	Status Status `json:"status"`
	// Reason says why a cell failed or was not run.
	Reason string `json:"reason,omitempty"`
	// Protocol is the application protocol the cell ran over.
	Protocol string  `json:"protocol,omitempty"`
	Seconds  float64 `json:"seconds,omitempty"`
	// Link says what the emulated link did to the packets, and Capture
	// what the capture held.
	Link    string `json:"link,omitempty"`
	Capture string `json:"capture,omitempty"`
	// Logs is the directory of the cell's logs, key logs and downloads,
	// when they were kept.
	Logs string `json:"logs,omitempty"`
	// Known explains a failure whose cause lies outside satquic.
	Known string `json:"known_issue,omitempty"`
}

// Options configure a run of the matrix.
type Options struct {
	Cases []*Case
	// Implementations are satquic and its peers; satquic must be first.
	Implementations []Implementation
	// Work is the directory for files, downloads and logs (a temporary
	// one when empty); Keep leaves what it holds after the run.
	Work string
	Keep bool
	// Seed seeds the links' randomness (loss, corruption); each cell
	// derives its own from it.
	Seed uint64
	// Progress receives a line per cell as it starts and ends.
	Progress io.Writer
}

// pairs are the cells of each case: satquic against itself, and for each
// peer, satquic as client and as server, and the peer against itself as
// the reference of what the peer can do.
func pairs(impls []Implementation) [][2]Implementation {
	s := impls[0]
	out := [][2]Implementation{{s, s}}
	for _, p := range impls[1:] {
		out = append(out, [2]Implementation{s, p}, [2]Implementation{p, s}, [2]Implementation{p, p})
	}
	return out
}

// Run runs every case between every pair and returns the matrix.
func Run(ctx context.Context, o Options) (*Matrix, error) {
	if len(o.Implementations) == 0 || o.Implementations[0].Name() != "satquic" {
		return nil, errors.New("interop: satquic must be the first implementation")
	}
	work := o.Work
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "satquic-interop-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	if !o.Keep {
		defer os.RemoveAll(work)
	}
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	m := &Matrix{Seed: o.Seed, Started: time.Now().UTC()}
	for _, im := range o.Implementations {
		m.Implementations = append(m.Implementations, im.Name())
	}
	prepared := map[string]error{}
	for _, im := range o.Implementations {
		fmt.Fprintf(progress, "preparing %s\n", im.Name())
		prepared[im.Name()] = im.Prepare(ctx, work)
		if err := prepared[im.Name()]; err != nil {
			fmt.Fprintf(progress, "%s: %v\n", im.Name(), err)
		}
	}
	ps := pairs(o.Implementations)
	total, done := len(o.Cases)*len(ps), 0
	for ci, c := range o.Cases {
		m.Cases = append(m.Cases, c.Name)
		cr := &caseRun{c: c, work: filepath.Join(work, c.Name), seed: o.Seed, index: ci, keep: o.Keep}
		for pi, p := range ps {
			if err := ctx.Err(); err != nil {
				return m, context.Cause(ctx)
			}
			done++
			fmt.Fprintf(progress, "[%d/%d] %s %s -> %s ... ", done, total, c.Name, p[0].Name(), p[1].Name())
			r := cr.cell(ctx, p[0], p[1], prepared, pi)
			fmt.Fprintln(progress, progressLine(r))
			m.Results = append(m.Results, r)
		}
		cr.close()
	}
	m.Finished = time.Now().UTC()
	return m, nil
}

func progressLine(r Result) string {
	line := string(r.Status)
	if r.Seconds > 0 {
		line += fmt.Sprintf(" (%.1fs)", r.Seconds)
	}
	if r.Reason != "" {
		line += ": " + r.Reason
	}
	return line
}
