package loadcmp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/satquic/satquic/bench/load"
	"github.com/satquic/satquic/bench/load/payload"
)

// Config is one side-by-side experiment.
type Config struct {
	// Servers are the stacks, in table order; the first is compared with
	// the second.
	Servers  []Server
	Payloads []int64
	// Workers is the number of concurrent requests (seed 001: 200).
	Workers int
	// Conns is how many connections the workers share for the
	// requests measure (0 or 1: one).
	Conns int
	// Duration and Warmup time each measurement.
	Duration, Warmup time.Duration
	// Runs repeats every measurement; tables give the median.
	Runs int
	// NewConn adds the measurement of new connections per second, with
	// the first payload.
	NewConn bool
	// ConnectionsOnly leaves out the requests measure: only new
	// connections per second are measured (NewConn must be set).
	ConnectionsOnly bool
	// Progress, if set, receives a line per measurement.
	Progress io.Writer
}

// Measures of a Sample.
const (
	MeasureRequests    = "requests"
	MeasureConnections = "new-connections"
)

// Sample is one measurement: one stack, payload, measure and run.
type Sample struct {
	Stack        string       `json:"stack"`
	Measure      string       `json:"measure"`
	PayloadBytes int64        `json:"payload_bytes"`
	Run          int          `json:"run"`
	Result       *load.Result `json:"result"`
	// ServerCPUSeconds is the processor time the server used during the
	// measured part, 0 where it could not be metered.
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
}

// CPUPerOp is the server's processor time per successful request (or
// per connection, for the new-connections measure), in microseconds;
// 0 if unknown.
func (s Sample) CPUPerOp() float64 {
	n := s.Result.Succeeded
	if s.Measure == MeasureConnections {
		n = s.Result.Connections
	}
	if n == 0 {
		return 0
	}
	return s.ServerCPUSeconds * 1e6 / float64(n)
}

// Rate is the sample's rate: requests/s, or connections/s for the
// new-connections measure.
func (s Sample) Rate() float64 {
	if s.Measure == MeasureConnections {
		return s.Result.ConnectionsPerSecond
	}
	return s.Result.RequestsPerSecond
}

func (c *Config) check() error {
	switch {
	case len(c.Servers) == 0:
		return errors.New("loadcmp: no server to measure")
	case len(c.Payloads) == 0:
		return errors.New("loadcmp: no payload size")
	case c.Workers < 1:
		return fmt.Errorf("loadcmp: workers must be at least 1, not %d", c.Workers)
	case c.Conns < 0 || c.Conns > c.Workers:
		return fmt.Errorf("loadcmp: connections must be from 1 to the workers (%d), not %d", c.Workers, c.Conns)
	case c.Duration <= 0:
		return errors.New("loadcmp: the duration must be positive")
	case c.Warmup < 0:
		return errors.New("loadcmp: the warm-up must not be negative")
	case c.Runs < 1:
		return fmt.Errorf("loadcmp: runs must be at least 1, not %d", c.Runs)
	case c.ConnectionsOnly && !c.NewConn:
		return errors.New("loadcmp: connections only, but no new-connections measure")
	}
	seen := map[string]bool{}
	for _, s := range c.Servers {
		if seen[s.Name()] {
			return fmt.Errorf("loadcmp: stack %s given twice", s.Name())
		}
		seen[s.Name()] = true
	}
	for _, p := range c.Payloads {
		if p < 0 || p > payload.MaxSize {
			return fmt.Errorf("loadcmp: payload of %d bytes out of range", p)
		}
	}
	return nil
}

// measurement is one cell of the plan.
type measurement struct {
	measure string
	payload int64
}

// Run runs the experiment: for each run, each payload (and the
// new-connections measure), each stack in turn, alternating which stack
// goes first so that neither always follows the other. It returns the
// samples measured so far with the first error that stopped it.
func Run(ctx context.Context, cfg Config, certs Certs) ([]Sample, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	var plan []measurement
	for _, p := range cfg.Payloads {
		if !cfg.ConnectionsOnly {
			plan = append(plan, measurement{MeasureRequests, p})
		}
	}
	if cfg.NewConn {
		plan = append(plan, measurement{MeasureConnections, cfg.Payloads[0]})
	}
	total := cfg.Runs * len(plan) * len(cfg.Servers)
	var samples []Sample
	for run := 1; run <= cfg.Runs; run++ {
		for i, m := range plan {
			order := slices.Clone(cfg.Servers)
			if (run+i)%2 == 0 {
				slices.Reverse(order)
			}
			for _, srv := range order {
				if err := ctx.Err(); err != nil {
					return samples, err
				}
				s, err := measure(ctx, cfg, certs, srv, m, run)
				if err != nil {
					return samples, err
				}
				samples = append(samples, s)
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "[%d/%d] %s\n", len(samples), total, describe(s))
				}
			}
		}
	}
	return samples, nil
}

func describe(s Sample) string {
	r := s.Result
	what := fmt.Sprintf("%.0f requests/s", r.RequestsPerSecond)
	if s.Measure == MeasureConnections {
		what = fmt.Sprintf("%.0f connections/s", r.ConnectionsPerSecond)
	}
	cpu := ""
	if v := s.CPUPerOp(); v > 0 {
		cpu = fmt.Sprintf(", server %.0f µs CPU each", v)
	}
	return fmt.Sprintf("%s %s %s run %d: %s%s, p99 %.2f ms, %d errors", s.Stack, s.Measure, FormatPayload(s.PayloadBytes),
		s.Run, what, cpu, r.LatencyMs.P99, r.Errors)
}

// measure starts a fresh server, loads it and stops it.
func measure(ctx context.Context, cfg Config, certs Certs, srv Server, m measurement, run int) (Sample, error) {
	inst, err := srv.Start(ctx, certs)
	if err != nil {
		return Sample{}, err
	}
	var cpuStart, cpuEnd time.Duration
	var metered bool
	o := load.Options{
		MeasureStart: func() { cpuStart, metered = inst.CPUTime() },
		MeasureEnd: func() {
			var ok bool
			cpuEnd, ok = inst.CPUTime()
			metered = metered && ok
		},
		URL:      "https://" + inst.Addr() + payload.Prefix + strconv.FormatInt(m.payload, 10),
		Workers:  cfg.Workers,
		Duration: cfg.Duration,
		Warmup:   cfg.Warmup,
		NewConn:  m.measure == MeasureConnections,
		TLS:      certs.ClientTLS(),
	}
	if !o.NewConn {
		o.Conns = cfg.Conns
	}
	res, err := load.Run(ctx, o)
	if serr := inst.Stop(); err == nil && serr != nil {
		err = serr
	}
	if err != nil {
		return Sample{}, fmt.Errorf("loadcmp: %s, %s %s: %w", srv.Name(), m.measure, FormatPayload(m.payload), err)
	}
	s := Sample{Stack: srv.Name(), Measure: m.measure, PayloadBytes: m.payload, Run: run, Result: res}
	if metered && cpuEnd > cpuStart {
		s.ServerCPUSeconds = (cpuEnd - cpuStart).Seconds()
	}
	return s, nil
}

// FormatPayload writes a payload size exactly and briefly: 30 B, 1 KiB,
// 10 KiB, 1000 B.
func FormatPayload(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	default:
		return strconv.FormatInt(n, 10) + " B"
	}
}
