//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/bench/loadcmp"
)

// satquic bench bulk: one-connection goodput on loopback for satquic,
// quic-go and kernel TCP with TLS, and server memory per idle connection
// (package bench, bulk.go). Its children are "satquic bench bulk-peer"
// (bench_bulk_peer.go) and quicgo-peer's bulk-server and bulk-client.

const benchBulkSynopsis = `bench bulk [--size 300MB] [--runs 3] [--stacks satquic,quic-go,tcp-tls]
       [--idle-conns 10000] [--busy] [--json FILE] [--quicgo-peer FILE]
       [--timeout D] [--cpuprofile-dir DIR]

Goodput of one connection on loopback: each stack's client downloads
--size bytes from its own server, both fresh child processes with the
machine's GOMAXPROCS, --runs times, the stacks taking turns. Stacks:
satquic (satquic's QUIC, default configuration), quic-go (quic-go's, built
from internal/cmd/quicgo-peer with the go command, so run from the source
tree or pass --quicgo-peer) and tcp-tls (kernel TCP with Go's crypto/tls).
The table gives the median Mbit/s and its ratio to quic-go's.
--busy runs another process that keeps one core busy during the downloads.
--idle-conns N then measures, for satquic and quic-go, the server's memory
per idle connection: its live Go heap and goroutine stacks (and resident
set) with N connections of its own stack's client held idle, less the
same without them, divided by N (0: skip). --cpuprofile-dir writes a CPU
profile of every server and client. Progress goes to stderr, the tables to
stdout.`

type benchBulkOptions struct {
	size       int64
	runs       int
	stacks     []string
	idleConns  int
	busy       bool
	jsonPath   string
	peer       string
	timeout    time.Duration
	profileDir string
}

// benchBulkStacks are the stacks bench bulk knows, in table order.
var benchBulkStacks = []string{bench.BulkSatquic, bench.BulkQuicgo, bench.BulkTCPTLS}

func parseBenchBulkFlags(args []string, stderr io.Writer) (*benchBulkOptions, error) {
	o := &benchBulkOptions{}
	var size, stacks string
	fs := newFlagSet("bench bulk", benchBulkSynopsis, stderr)
	fs.StringVar(&size, "size", "300MB", "bytes per download (B, kB, MB, GB or KiB, MiB, GiB)")
	fs.IntVar(&o.runs, "runs", 3, "downloads per stack; the table gives the median")
	fs.StringVar(&stacks, "stacks", strings.Join(benchBulkStacks, ","), "comma-separated stacks, in table order")
	fs.IntVar(&o.idleConns, "idle-conns", 10000, "idle connections for the memory measurement (0: skip it)")
	fs.BoolVar(&o.busy, "busy", false, "keep one core busy with another process during the downloads")
	fs.StringVar(&o.jsonPath, "json", "", "write the summaries, every run and the metadata to FILE as JSON")
	fs.StringVar(&o.peer, "quicgo-peer", "", "a built internal/cmd/quicgo-peer program (default: build it from the source tree)")
	fs.DurationVar(&o.timeout, "timeout", 0, "bound on one download (default: 30s + the size at 50 Mbit/s)")
	fs.StringVar(&o.profileDir, "cpuprofile-dir", "", "write a CPU profile of every child to DIR")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	usage := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errUsage}, a...)...)
	}
	sizes, err := bench.ParseSizes(size)
	if err != nil || len(sizes) != 1 || sizes[0] <= 0 {
		return nil, usage("--size %q: want one positive size", size)
	}
	o.size = sizes[0]
	switch {
	case o.runs < 1:
		return nil, usage("--runs must be at least 1, not %d", o.runs)
	case o.idleConns < 0 || o.idleConns > 1_000_000:
		return nil, usage("--idle-conns must be from 0 to 1000000, not %d", o.idleConns)
	case o.timeout < 0:
		return nil, usage("--timeout must not be negative")
	}
	if o.stacks, err = stackList(stacks, benchBulkStacks); err != nil {
		return nil, usage("%v", err)
	}
	if err := checkPeerProgram(o.peer); err != nil {
		return nil, usage("%v", err)
	}
	if d := filepath.Dir(o.jsonPath); o.jsonPath != "" && !isDir(d) {
		return nil, usage("output %s: directory %s does not exist", o.jsonPath, d)
	}
	if o.profileDir != "" && !isDir(o.profileDir) {
		return nil, usage("--cpuprofile-dir %s is not a directory", o.profileDir)
	}
	return o, nil
}

func runBenchBulk(args []string, stdout, stderr io.Writer) error {
	o, err := parseBenchBulkFlags(args, stderr)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "satquic-bench-bulk-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	programs, quicgoVersion, err := benchBulkPrograms(o, dir, stderr)
	if err != nil {
		// A missing toolchain or source tree is about the machine: exit
		// status 2, as for bad flags.
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program to start its children: %w", err)
	}
	cfg := bench.BulkConfig{
		Programs: programs, Size: o.size, Runs: o.runs, IdleConns: o.idleConns,
		Timeout: o.timeout, ProfileDir: o.profileDir, Progress: stderr,
	}
	if o.busy {
		cfg.Busy = []string{exe, "bench", "bulk-peer", "busy"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	meta := bench.NewBulkMetadata(cfg, version(), quicgoVersion, append([]string{"satquic", "bench", "bulk"}, args...))
	fmt.Fprintf(stderr, "satquic bench bulk: %d downloads of %s (%d runs x %d stacks)", o.runs*len(programs),
		bench.FormatSize(o.size), o.runs, len(programs))
	if o.busy {
		fmt.Fprint(stderr, ", one core kept busy")
	}
	fmt.Fprintln(stderr)
	out, runErr := bench.RunBulk(ctx, cfg)
	if out == nil {
		return runErr
	}
	doc := bench.BulkDocument{Metadata: meta, BulkOutcome: out}
	if runErr != nil {
		if len(out.Runs) > 0 {
			fmt.Fprintln(stdout, "Partial results (the experiment did not finish; no files written):")
			_ = doc.WriteText(stdout)
		}
		return runErr
	}
	if err := doc.WriteText(stdout); err != nil {
		return err
	}
	return writeOutput(o.jsonPath, doc.WriteJSON)
}

// benchBulkPrograms makes the children's command lines of the chosen
// stacks, building quic-go's peer unless --quicgo-peer gave it.
func benchBulkPrograms(o *benchBulkOptions, dir string, stderr io.Writer) ([]bench.BulkProgram, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("finding this program to start its children: %w", err)
	}
	var programs []bench.BulkProgram
	quicgoVersion := ""
	for _, s := range o.stacks {
		switch s {
		case bench.BulkQuicgo:
			peer := o.peer
			if peer == "" {
				fmt.Fprintln(stderr, "building internal/cmd/quicgo-peer (quic-go) with the go command...")
				if peer, err = loadcmp.BuildPeer(dir); err != nil {
					return nil, "", err
				}
			}
			quicgoVersion = loadcmp.ModuleVersion(peer, "github.com/quic-go/quic-go")
			programs = append(programs, bench.BulkProgram{
				Stack: s, Server: []string{peer, "bulk-server"}, Client: []string{peer, "bulk-client"}, Idle: true,
			})
		default:
			peer := []string{exe, "bench", "bulk-peer"}
			programs = append(programs, bench.BulkProgram{
				Stack:  s,
				Server: append(append([]string{}, peer...), "server", "--stack", s),
				Client: append(append([]string{}, peer...), "client", "--stack", s),
				Idle:   s == bench.BulkSatquic,
			})
		}
	}
	return programs, quicgoVersion, nil
}
