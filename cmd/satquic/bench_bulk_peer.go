//go:build linux

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/satquic/satquic/bench"
)

// satquic bench bulk-peer: the children of "satquic bench bulk" for the
// stacks this binary carries (satquic and tcp-tls), speaking the bulk
// experiment's protocol (bench/bulkproto), and the busy loop of
// --busy.

const benchBulkPeerSynopsis = `bench bulk-peer server --stack S --addr HOST:PORT --cert FILE --key FILE [--idle] [--cpuprofile FILE]
       bench bulk-peer client --stack S --addr HOST:PORT --ca FILE --server-name NAME
                              (--size N | --conns N) [--cpuprofile FILE]
       bench bulk-peer busy

The children "satquic bench bulk" starts; stacks satquic and tcp-tls. Each
runs until its standard input ends (server: {"listening":...}, then a memory
report for every "mem" line; client: one JSON report). busy keeps one core
busy until its standard input ends.`

func runBenchBulkPeer(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: satquic %s\n", benchBulkPeerSynopsis)
		return fmt.Errorf("%w: bench bulk-peer needs server, client or busy", errUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "server":
		return runBulkPeerServer(ctx, args[1:], stdout, stderr)
	case "client":
		return runBulkPeerClient(ctx, args[1:], stdout, stderr)
	case "busy":
		return spinUntilEOF(os.Stdin)
	}
	return fmt.Errorf("%w: bench bulk-peer: unknown role %q (server, client or busy)", errUsage, args[0])
}

func runBulkPeerServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o bench.BulkServerOptions
	var certFile, keyFile, profile string
	fs := newFlagSet("bench bulk-peer server", benchBulkPeerSynopsis, stderr)
	fs.StringVar(&o.Stack, "stack", "", "satquic or tcp-tls")
	fs.StringVar(&o.Addr, "addr", "", "address to listen on (HOST:PORT)")
	fs.StringVar(&certFile, "cert", "", "PEM certificate chain")
	fs.StringVar(&keyFile, "key", "", "PEM private key")
	fs.BoolVar(&o.Idle, "idle", false, "hold connections without serving them (idle memory)")
	fs.StringVar(&profile, "cpuprofile", "", "write a CPU profile to FILE")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return fmt.Errorf("%w: loading the certificate: %v", errUsage, err)
	}
	o.Cert = cert
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return err
	}
	defer stopProfile()
	return bench.ServeBulk(ctx, o, os.Stdin, stdout)
}

func runBulkPeerClient(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o bench.BulkClientOptions
	var caFile, size, profile string
	fs := newFlagSet("bench bulk-peer client", benchBulkPeerSynopsis, stderr)
	fs.StringVar(&o.Stack, "stack", "", "satquic or tcp-tls")
	fs.StringVar(&o.Addr, "addr", "", "the server's address (HOST:PORT)")
	fs.StringVar(&caFile, "ca", "", "PEM certificate that signs the server's")
	fs.StringVar(&o.ServerName, "server-name", "", "the name the server's certificate must carry")
	fs.StringVar(&size, "size", "", "bytes to download")
	fs.IntVar(&o.Conns, "conns", 0, "idle connections to open and hold instead of downloading")
	fs.StringVar(&profile, "cpuprofile", "", "write a CPU profile to FILE")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (size == "") == (o.Conns == 0) {
		return fmt.Errorf("%w: give one of --size and --conns", errUsage)
	}
	if size != "" {
		sizes, err := bench.ParseSizes(size)
		if err != nil || len(sizes) != 1 {
			return fmt.Errorf("%w: --size %q", errUsage, size)
		}
		o.Size = sizes[0]
	}
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("%w: --ca: %v", errUsage, err)
	}
	o.Roots = x509.NewCertPool()
	if !o.Roots.AppendCertsFromPEM(ca) {
		return fmt.Errorf("%w: --ca %s holds no PEM certificate", errUsage, caFile)
	}
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return err
	}
	defer stopProfile()
	return bench.RunBulkClient(ctx, o, os.Stdin, stdout)
}

// spinUntilEOF keeps one core busy until r ends.
func spinUntilEOF(r io.Reader) error {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, r)
		close(done)
	}()
	for n := 0; ; n++ {
		// Checking the channel only now and then keeps the loop on the
		// processor; Gosched lets the reader run on a machine with
		// GOMAXPROCS 1.
		if n%(1<<20) == 0 {
			select {
			case <-done:
				return nil
			default:
				runtime.Gosched()
			}
		}
	}
}
