//go:build linux

package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/bench/load/payload"
	"github.com/satquic/satquic/bench/loadcmp"
	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// satquic bench load: seed 001's HTTP/3 load table, satquic's server and
// quic-go's side by side (package bench/loadcmp), and bench load-server,
// the satquic server it starts as a child process.

const benchLoadSynopsis = `bench load [--payloads 30,1024,5120,10240] [-c 200] [--conns 1] [-d 10s] [--warmup 1s]
       [--runs N] [--stacks satquic,quic-go] [--cps=false | --connections-only] [--quicgo-peer FILE]
       [--json FILE] [--csv FILE]

Seed 001's load experiment on loopback: for each payload, requests/s of
satquic's HTTP/3 server and of quic-go's with -c requests under way at once
over one connection (or --conns), then new connections/s (a connection per request,
first payload), with the ratio of the two; --connections-only measures
new connections/s alone. The load generator is "satquic
load"'s, in this process; each server is a fresh child process per
measurement ("satquic bench load-server", and quic-go's built from
internal/cmd/quicgo-peer with the go command, so run from the source tree
or pass --quicgo-peer). satquic's server lifts its limits on handshakes and
connections per source, which would refuse part of the one generator's
connections; the table counts each stack's failed requests, listed by kind
under it. Progress goes to stderr, the table to stdout.`

type benchLoadOptions struct {
	payloads          []int64
	workers, conns    int
	duration, warmup  time.Duration
	runs              int
	stacks            []string
	cps               bool
	connectionsOnly   bool
	peer              string
	jsonPath, csvPath string
}

// benchLoadStacks are the stacks bench load knows.
var benchLoadStacks = []string{"satquic", "quic-go"}

func parseBenchLoadFlags(args []string, stderr io.Writer) (*benchLoadOptions, error) {
	o := &benchLoadOptions{}
	var payloads, stacks string
	fs := newFlagSet("bench load", benchLoadSynopsis, stderr)
	fs.StringVar(&payloads, "payloads", "30,1024,5120,10240", "comma-separated response body sizes (B, kB, KiB, ...)")
	fs.IntVar(&o.workers, "c", 200, "requests under way at once")
	fs.IntVar(&o.conns, "conns", 1, "connections the requests share (requests/s only)")
	fs.DurationVar(&o.duration, "d", 10*time.Second, "measured time per stack and payload")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "uncounted load before each measurement")
	fs.IntVar(&o.runs, "runs", 1, "repetitions of every measurement; the table gives medians")
	fs.StringVar(&stacks, "stacks", strings.Join(benchLoadStacks, ","), "comma-separated servers to measure, in table order")
	fs.BoolVar(&o.cps, "cps", true, "measure new connections/s too")
	fs.BoolVar(&o.connectionsOnly, "connections-only", false, "measure new connections/s only, with the first payload")
	fs.StringVar(&o.peer, "quicgo-peer", "", "a built internal/cmd/quicgo-peer program (default: build it from the source tree)")
	fs.StringVar(&o.jsonPath, "json", "", "write the summaries, every measurement and the metadata to FILE as JSON")
	fs.StringVar(&o.csvPath, "csv", "", "write every measurement to FILE as CSV")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	usage := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errUsage}, a...)...)
	}
	var err error
	if o.payloads, err = bench.ParseSizes(payloads); err != nil {
		return nil, usage("--payloads: %v", err)
	}
	for _, p := range o.payloads {
		if p > payload.MaxSize {
			return nil, usage("--payloads: %d bytes is more than %d", p, int64(payload.MaxSize))
		}
	}
	switch {
	case o.workers < 1 || o.workers > 100_000:
		return nil, usage("-c must be from 1 to 100000, not %d", o.workers)
	case o.conns < 1 || o.conns > o.workers:
		return nil, usage("--conns must be from 1 to -c (%d), not %d", o.workers, o.conns)
	case o.duration <= 0:
		return nil, usage("-d must be positive, not %v", o.duration)
	case o.warmup < 0:
		return nil, usage("--warmup must not be negative")
	case o.runs < 1:
		return nil, usage("--runs must be at least 1, not %d", o.runs)
	case o.connectionsOnly && !o.cps:
		return nil, usage("--connections-only and --cps=false exclude each other")
	}
	if o.stacks, err = stackList(stacks, benchLoadStacks); err != nil {
		return nil, usage("%v", err)
	}
	if err := checkPeerProgram(o.peer); err != nil {
		return nil, usage("%v", err)
	}
	for _, p := range []string{o.jsonPath, o.csvPath} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(p)); err != nil || !st.IsDir() {
			return nil, usage("output %s: directory %s does not exist", p, filepath.Dir(p))
		}
	}
	return o, nil
}

func runBenchLoad(args []string, stdout, stderr io.Writer) error {
	o, err := parseBenchLoadFlags(args, stderr)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "satquic-bench-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	certs, err := loadcmp.WriteCerts(dir)
	if err != nil {
		return err
	}
	servers, versions, err := benchLoadServers(o, dir, stderr)
	if err != nil {
		// A missing toolchain or source tree is about the machine and
		// the command line, as in bench download: exit status 2.
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	cfg := loadcmp.Config{
		Servers: servers, Payloads: o.payloads, Workers: o.workers, Conns: o.conns, Duration: o.duration, Warmup: o.warmup,
		Runs: o.runs, NewConn: o.cps, ConnectionsOnly: o.connectionsOnly, Progress: stderr,
	}
	meta := loadcmp.NewMetadata(cfg, version(), versions, append([]string{"satquic", "bench", "load"}, args...))
	measurements := len(o.payloads)
	if o.cps {
		measurements++
	}
	if o.connectionsOnly {
		measurements = 1
	}
	fmt.Fprintf(stderr, "satquic bench load: %d measurements of %v (+%v warm-up) each, -c %d\n",
		measurements*len(servers)*o.runs, o.duration, o.warmup, o.workers)
	samples, runErr := loadcmp.Run(ctx, cfg, certs)
	doc := loadcmp.NewDocument(meta, samples)
	if runErr != nil {
		if len(samples) > 0 {
			fmt.Fprintln(stdout, "Partial results (the experiment did not finish; no files written):")
			_ = doc.WriteText(stdout)
		}
		return runErr
	}
	if err := doc.WriteText(stdout); err != nil {
		return err
	}
	return writeBenchLoadFiles(o, doc)
}

// benchLoadServers makes the servers of the chosen stacks, building
// quic-go's peer unless --quicgo-peer gave it, and the stacks' versions.
func benchLoadServers(o *benchLoadOptions, dir string, stderr io.Writer) ([]loadcmp.Server, map[string]string, error) {
	versions := map[string]string{"satquic": version()}
	var servers []loadcmp.Server
	for _, s := range o.stacks {
		switch s {
		case "satquic":
			exe, err := os.Executable()
			if err != nil {
				return nil, nil, fmt.Errorf("finding this program to start its server: %w", err)
			}
			servers = append(servers, &loadcmp.ProcessServer{Stack: s, Argv: []string{exe, "bench", "load-server"}})
		case "quic-go":
			peer := o.peer
			if peer == "" {
				fmt.Fprintln(stderr, "building internal/cmd/quicgo-peer (quic-go's server) with the go command...")
				var err error
				if peer, err = loadcmp.BuildPeer(dir); err != nil {
					return nil, nil, err
				}
			}
			versions[s] = loadcmp.ModuleVersion(peer, "github.com/quic-go/quic-go")
			servers = append(servers, &loadcmp.ProcessServer{Stack: s, Argv: []string{peer, "load-server"}})
		}
	}
	return servers, versions, nil
}

func writeBenchLoadFiles(o *benchLoadOptions, doc loadcmp.Document) error {
	return errors.Join(writeOutput(o.jsonPath, doc.WriteJSON), writeOutput(o.csvPath, doc.RunsTable().WriteCSV))
}

const benchLoadServerSynopsis = `bench load-server --addr HOST:PORT --cert FILE --key FILE [--cpuprofile FILE]
       [--memprofile FILE]

The satquic side of "satquic bench load": serves GET ` + payload.Prefix + `N with N
bytes over satquic's HTTP/3 until SIGINT or SIGTERM: the default configuration,
but for the server's limits on connections and handshakes, which are lifted
so that the one address of the load generator is never refused (the
defaults hold a source to 32 handshakes and 512 connections at once, a guard
that would refuse most of a new-connections measurement, where the
generator holds -c handshakes at once and the closed connections linger),
and which would send a Retry beyond 128 handshakes with unvalidated clients.
Port 0 picks a free port. Once the socket is bound it prints one JSON line
to stdout, {"listening":"HOST:PORT"}, as quicgo-peer load-server does.
--cpuprofile writes the server's CPU profile, for "go tool pprof", when it
stops; --memprofile its allocation profile ("go tool pprof
-sample_index=alloc_space", or alloc_objects for the count).`

// benchLoadServerConfig is satquic's default configuration with the
// server's limits (quic.Config.MaxHandshakes and the others) far above
// what one load generator, a single source, holds at once, so that no
// measured figure includes refusals, nor Retry packets for the handshakes
// beyond MaxUnvalidatedHandshakes: the limits guard a server against
// clients taking its places, which is not what bench load measures, and
// with them every new connection makes the same handshake with both
// servers. quic-go's server, with its default configuration, has no such
// limits and sends no Retry.
func benchLoadServerConfig() *quic.Config {
	return &quic.Config{
		MaxHandshakes:            1 << 20,
		MaxHandshakesPerIP:       1 << 20,
		MaxConnections:           1 << 20,
		MaxConnectionsPerIP:      1 << 20,
		MaxUnvalidatedHandshakes: 1 << 20,
	}
}

func runBenchLoadServer(args []string, stdout, stderr io.Writer) error {
	var addr, certFile, keyFile, profile, memProfile string
	fs := newFlagSet("bench load-server", benchLoadServerSynopsis, stderr)
	fs.StringVar(&addr, "addr", "", "UDP address to listen on (HOST:PORT)")
	fs.StringVar(&certFile, "cert", "", "PEM certificate chain")
	fs.StringVar(&keyFile, "key", "", "PEM private key")
	fs.StringVar(&profile, "cpuprofile", "", "write a CPU profile to FILE when the server stops")
	fs.StringVar(&memProfile, "memprofile", "", "write an allocation profile to FILE when the server stops")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"addr", addr}, {"cert", certFile}, {"key", keyFile}} {
		if f.v == "" {
			return fmt.Errorf("%w: --%s is required", errUsage, f.name)
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("%w: loading the certificate: %v", errUsage, err)
	}
	udpAddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return fmt.Errorf("%w: --addr: %v", errUsage, err)
	}
	udp, err := net.ListenUDP("udp", udpAddr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		udp.Close()
		return err
	}
	defer stopProfile()
	stopMemProfile, err := startMemProfile(memProfile)
	if err != nil {
		udp.Close()
		return err
	}
	defer stopMemProfile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http3.Server{
		Handler:    payload.Handler(),
		TLSConfig:  http3.ConfigureTLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		QUICConfig: benchLoadServerConfig(),
	}
	l, err := srv.Listen(udp)
	if err != nil {
		udp.Close()
		return fmt.Errorf("listening: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	line := struct {
		Listening string `json:"listening"`
	}{udp.LocalAddr().String()}
	if err := json.NewEncoder(stdout).Encode(line); err != nil {
		_ = srv.Close()
		<-done
		return fmt.Errorf("announcing the address: %w", err)
	}
	select {
	case err := <-done:
		return fmt.Errorf("server stopped: %w", err)
	case <-ctx.Done():
	}
	cerr := srv.Close()
	if err := <-done; err != nil && !errors.Is(err, http3.ErrServerClosed) {
		return errors.Join(fmt.Errorf("server: %w", err), cerr)
	}
	return cerr
}
