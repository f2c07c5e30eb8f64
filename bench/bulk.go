package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// The bulk experiment ("satquic bench bulk", issue 16): the goodput of
// one connection on loopback, for satquic, quic-go and kernel TCP with
// TLS, each stack's client against its own server; and the memory a
// server holds per idle connection, for satquic and quic-go.
//
// Every end is a child process with the machine's GOMAXPROCS, so that no
// stack shares a Go runtime with another end or with the experiment, and
// quic-go stays out of satquic's dependencies (internal/cmd/quicgo-peer).
// Each download gets a fresh server and client; the stacks take turns in
// every run, in an order that rotates from run to run, so that a machine
// that slows down over time slows every stack alike. With Busy, another
// process keeps one core busy for the whole of the downloads.
//
// The idle measurement starts a server that holds its connections without
// serving them, has the stack's own client open IdleConns connections to
// it (idleDialers handshakes at a time) and hold them, and divides the
// growth of the server's memory by their number. The server measures
// itself, after a garbage collection that returns free memory to the
// system: its Go memory (live heap objects and goroutine stacks, the
// primary figure, insensitive to when the collector last ran) and its
// resident set.

// BulkProgram is how a stack's children are started: Server and Client
// are command lines that the experiment completes with flags
// (bulkServerArgs, bulkClientArgs).
type BulkProgram struct {
	Stack  string
	Server []string
	Client []string
	// Idle: the stack takes part in the idle measurement.
	Idle bool
}

// BulkConfig is one bulk experiment.
type BulkConfig struct {
	Programs []BulkProgram
	// Size is each download's size in bytes; Runs the downloads per stack.
	Size int64
	Runs int
	// IdleConns, if positive, measures memory per idle connection with
	// that many connections.
	IdleConns int
	// Busy, if set, is the command line of a program that keeps one core
	// busy while the downloads run.
	Busy []string
	// Timeout bounds one download; zero means 30 s plus the size at
	// 50 Mbit/s.
	Timeout time.Duration
	// ProfileDir, if set, receives a CPU profile of every child,
	// STACK-server-RUN.pprof and STACK-client-RUN.pprof.
	ProfileDir string
	// Progress receives a line per download; nil: none.
	Progress io.Writer
}

func (c *BulkConfig) check() error {
	switch {
	case len(c.Programs) == 0:
		return errors.New("bench bulk: no stacks")
	case c.Size <= 0 || c.Size > maxBulkSize:
		return fmt.Errorf("bench bulk: size %d is not from 1 to %d bytes", c.Size, int64(maxBulkSize))
	case c.Runs < 1:
		return fmt.Errorf("bench bulk: %d runs", c.Runs)
	case c.IdleConns < 0:
		return fmt.Errorf("bench bulk: %d idle connections", c.IdleConns)
	}
	return nil
}

func (c *BulkConfig) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 30*time.Second + time.Duration(float64(c.Size)*8/50e6*float64(time.Second))
}

// BulkRun is one download.
type BulkRun struct {
	Stack       string  `json:"stack"`
	Run         int     `json:"run"`
	Bytes       int64   `json:"bytes"`
	ElapsedS    float64 `json:"elapsed_s"`
	HandshakeMs float64 `json:"handshake_ms"`
	GoodputMbps float64 `json:"goodput_mbps"`
	// ServerCPUS and ClientCPUS are the processor time (user and system)
	// each process used, from its start to its end: on a shared machine
	// CPU time per byte moves less than goodput does.
	ServerCPUS float64 `json:"server_cpu_s"`
	ClientCPUS float64 `json:"client_cpu_s"`
}

// CPUNsPerByte is the processor time both ends spent per byte of body.
func (r BulkRun) CPUNsPerByte() float64 {
	if r.Bytes <= 0 {
		return 0
	}
	return (r.ServerCPUS + r.ClientCPUS) * 1e9 / float64(r.Bytes)
}

// BulkOutcome is what an experiment measured; Results and Idle are filled
// by Summarize.
type BulkOutcome struct {
	Runs    []BulkRun    `json:"runs"`
	Results []BulkResult `json:"results"`
	Idle    []IdleResult `json:"idle,omitempty"`
}

// startupTimeout bounds a server's start and a mem report.
const startupTimeout = 20 * time.Second

// RunBulk runs the experiment. On failure it returns what it measured
// so far with the error.
func RunBulk(ctx context.Context, cfg BulkConfig) (*BulkOutcome, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	certs, err := bulkCertificates()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(certs.dir)
	out := &BulkOutcome{}
	err = runBulkDownloads(ctx, cfg, certs, out)
	if err == nil && cfg.IdleConns > 0 {
		err = runIdle(ctx, cfg, certs, out)
	}
	out.Summarize()
	return out, err
}

// bulkCerts are the benchmark certificate's files, for the children.
type bulkCerts struct {
	dir, cert, key string
}

func bulkCertificates() (bulkCerts, error) {
	c, err := BenchCertificate()
	if err != nil {
		return bulkCerts{}, err
	}
	dir, err := os.MkdirTemp("", "satquic-bench-bulk-")
	if err != nil {
		return bulkCerts{}, err
	}
	f := bulkCerts{dir: dir, cert: filepath.Join(dir, "cert.pem"), key: filepath.Join(dir, "key.pem")}
	if err := writeCertificatePEM(c, f.cert, f.key); err != nil {
		os.RemoveAll(dir)
		return bulkCerts{}, fmt.Errorf("bench bulk: %w", err)
	}
	return f, nil
}

func runBulkDownloads(ctx context.Context, cfg BulkConfig, certs bulkCerts, out *BulkOutcome) (err error) {
	if len(cfg.Busy) > 0 {
		busy, err := startChild(cfg.Busy)
		if err != nil {
			return fmt.Errorf("bench bulk: the busy loop: %w", err)
		}
		defer func() { busy.kill() }()
	}
	for r := range cfg.Runs {
		// Rotate the order, so that no stack always goes first.
		order := slices.Concat(cfg.Programs[r%len(cfg.Programs):], cfg.Programs[:r%len(cfg.Programs)])
		for _, p := range order {
			run, err := downloadBulk(ctx, cfg, certs, p, r+1)
			if err != nil {
				return err
			}
			out.Runs = append(out.Runs, run)
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "run %d/%d %-8s %s in %.3f s: %.0f Mbit/s, CPU %.2f ns/B (server %.2f s, client %.2f s)\n",
					r+1, cfg.Runs, p.Stack, FormatSize(run.Bytes), run.ElapsedS, run.GoodputMbps, run.CPUNsPerByte(),
					run.ServerCPUS, run.ClientCPUS)
			}
		}
	}
	return nil
}

// profileArgs asks a child for a CPU profile, when the experiment keeps
// them.
func profileArgs(cfg BulkConfig, stack, role string, run int) []string {
	if cfg.ProfileDir == "" {
		return nil
	}
	return []string{"--cpuprofile", filepath.Join(cfg.ProfileDir, stack+"-"+role+"-"+strconv.Itoa(run)+".pprof")}
}

// startBulkServer starts a server and waits for its address.
func startBulkServer(ctx context.Context, p BulkProgram, certs bulkCerts, extra ...string) (*child, string, error) {
	argv := slices.Concat(p.Server, []string{"--addr", "127.0.0.1:0", "--cert", certs.cert, "--key", certs.key}, extra)
	srv, err := startChild(argv)
	if err != nil {
		return nil, "", fmt.Errorf("bench bulk: %s server: %w", p.Stack, err)
	}
	var ann struct {
		Listening string `json:"listening"`
	}
	if err := srv.readJSON(ctx, startupTimeout, &ann); err != nil {
		srv.kill()
		return nil, "", fmt.Errorf("bench bulk: %s server: %w", p.Stack, err)
	}
	if ann.Listening == "" {
		srv.kill()
		return nil, "", fmt.Errorf("bench bulk: %s server announced no address", p.Stack)
	}
	return srv, ann.Listening, nil
}

func bulkClientArgs(p BulkProgram, certs bulkCerts, addr string, extra ...string) []string {
	return slices.Concat(p.Client, []string{"--addr", addr, "--ca", certs.cert, "--server-name", ServerName}, extra)
}

// downloadBulk runs one download with a fresh server and client.
func downloadBulk(ctx context.Context, cfg BulkConfig, certs bulkCerts, p BulkProgram, run int) (BulkRun, error) {
	srv, addr, err := startBulkServer(ctx, p, certs, profileArgs(cfg, p.Stack, "server", run)...)
	if err != nil {
		return BulkRun{}, err
	}
	cl, err := startChild(bulkClientArgs(p, certs, addr,
		slices.Concat([]string{"--size", strconv.FormatInt(cfg.Size, 10)}, profileArgs(cfg, p.Stack, "client", run))...))
	if err != nil {
		srv.kill()
		return BulkRun{}, fmt.Errorf("bench bulk: %s client: %w", p.Stack, err)
	}
	var rep BulkClientReport
	err = cl.readJSON(ctx, cfg.timeout(), &rep)
	if err != nil {
		cl.kill()
	} else {
		err = cl.stop()
	}
	err = errors.Join(err, srv.stop())
	if err == nil && (rep.Bytes != cfg.Size || rep.ElapsedNs <= 0) {
		err = fmt.Errorf("client reported %d bytes in %d ns, want %d bytes", rep.Bytes, rep.ElapsedNs, cfg.Size)
	}
	if err != nil {
		return BulkRun{}, fmt.Errorf("bench bulk: %s run %d: %w", p.Stack, run, err)
	}
	elapsed := time.Duration(rep.ElapsedNs)
	return BulkRun{
		Stack: p.Stack, Run: run, Bytes: rep.Bytes, ElapsedS: elapsed.Seconds(),
		HandshakeMs: float64(rep.HandshakeNs) / 1e6,
		GoodputMbps: Goodput(rep.Bytes, elapsed.Seconds()),
		ServerCPUS:  srv.cpuTime().Seconds(), ClientCPUS: cl.cpuTime().Seconds(),
	}, nil
}
