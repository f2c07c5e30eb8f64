package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// satquic serve: a directory over QUIC with hq-interop (HTTP/0.9), the
// protocol of the QUIC interop runner. It runs until interrupted.

func init() {
	register(command{
		name:    "serve",
		summary: "serve a directory over QUIC with hq-interop (HTTP/0.9)",
		run:     runServe,
	})
}

const serveSynopsis = `serve --dir DIR [--addr HOST:PORT] [--cert FILE --key FILE] [--retry] [--0rtt] [-v] [QUIC flags]

Serves the regular files under DIR: a client's "GET /path" gets the file's
bytes, or a stream reset with code 0x194 (not found). Paths never leave DIR,
through ".." or symbolic links. Without --cert and --key, a self-signed
ECDSA certificate is made; its SHA-256 is printed, for "satquic get --pin".
--retry makes every client prove its address with a Retry first (unless a
token from an earlier connection does); --0rtt accepts requests sent in
0-RTT by clients that resume a session, which an attacker could replay.`

type serveOptions struct {
	dir      string
	addr     string
	certFile string
	keyFile  string
	verbose  bool
	retry    bool
	zeroRTT  bool
	quic     quicOptions
}

func runServe(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr, nil)
}

// serve runs the server until ctx ends; ready, if set, learns the
// listening address and the certificate's fingerprint once it listens.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr net.Addr, fingerprint string)) error {
	var o serveOptions
	fs := newFlagSet("serve", serveSynopsis, stderr)
	fs.StringVar(&o.dir, "dir", "", "directory to serve (required)")
	fs.StringVar(&o.addr, "addr", "localhost:4433", "UDP address to listen on")
	fs.StringVar(&o.certFile, "cert", "", "PEM certificate chain (with --key); default: a self-signed certificate")
	fs.StringVar(&o.keyFile, "key", "", "PEM private key of --cert")
	fs.BoolVar(&o.verbose, "v", false, "log every request on stderr")
	fs.BoolVar(&o.retry, "retry", false, "validate every client's address with a Retry packet (costs a round trip)")
	fs.BoolVar(&o.zeroRTT, "0rtt", false, "accept 0-RTT requests from clients resuming a session (replayable)")
	o.quic.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.dir == "" {
		return fmt.Errorf("%w: --dir is required", errUsage)
	}
	if (o.certFile == "") != (o.keyFile == "") {
		return fmt.Errorf("%w: --cert and --key go together", errUsage)
	}
	root, err := os.OpenRoot(o.dir)
	if err != nil {
		return fmt.Errorf("%w: --dir: %v", errUsage, err)
	}
	defer root.Close()
	cert, err := serverCertificate(&o)
	if err != nil {
		return err
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{hq.ALPN}}
	conf := o.quic.config()
	conf.Allow0RTT = o.zeroRTT
	if o.retry {
		conf.RequireAddressValidation = func(net.Addr) bool { return true }
	}
	l, err := quic.ListenAddr(o.addr, tlsConf, conf)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer l.Close()
	fp := hq.Fingerprint(cert.Certificate[0])
	abs, _ := filepath.Abs(o.dir)
	fmt.Fprintf(stdout, "serving %s on %s (ALPN %s)\n", abs, l.Addr(), hq.ALPN)
	fmt.Fprintf(stdout, "certificate SHA-256: %s\n", fp)
	if ready != nil {
		ready(l.Addr(), fp)
	}
	srv := &hq.Server{Root: root}
	if o.verbose {
		var mu sync.Mutex
		srv.Log = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(stderr, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
		}
	}
	return srv.Serve(ctx, l)
}

// serverCertificate loads --cert and --key, or makes a self-signed
// certificate for the listening host and the loopback names.
func serverCertificate(o *serveOptions) (tls.Certificate, error) {
	if o.certFile != "" {
		cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
		if err != nil {
			return cert, fmt.Errorf("%w: %v", errUsage, err)
		}
		return cert, nil
	}
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, _, err := net.SplitHostPort(o.addr); err == nil && h != "" && h != "localhost" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsUnspecified() {
			hosts = append(hosts, h)
		}
	}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	return hq.SelfSigned(hosts, time.Now())
}
