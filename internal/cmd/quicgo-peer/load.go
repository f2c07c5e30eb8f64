package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/quic-go/quic-go/http3"

	"github.com/satquic/satquic/bench/load/payload"
)

// load-server: quic-go's HTTP/3 server with its default configuration,
// serving GET /bytes/N from satquic's payload handler, the very code
// satquic's own load server runs, so that "satquic bench load" compares
// the two stacks and nothing else.
func init() {
	register(subcommand{
		name:    "load-server",
		summary: "serve GET " + payload.Prefix + "N over quic-go's HTTP/3 for \"satquic bench load\"",
		run:     runLoadServer,
	})
}

const loadServerSynopsis = `load-server --addr HOST:PORT --cert FILE --key FILE [--cpuprofile FILE]

Serves GET ` + payload.Prefix + `N with N bytes (satquic's bench/load/payload
handler) over HTTP/3 (quic-go, default configuration) until SIGINT or
SIGTERM. Port 0 picks a free port. Once the socket is bound it prints one
JSON line to stdout, {"listening":"HOST:PORT"}. --cpuprofile writes the
server's CPU profile when it stops.`

type loadServerOptions struct {
	addr, certFile, keyFile, profile string
}

func parseLoadServerFlags(args []string, stderr io.Writer) (loadServerOptions, error) {
	var o loadServerOptions
	fs := newFlagSet("load-server", loadServerSynopsis, stderr)
	fs.StringVar(&o.addr, "addr", "", "UDP address to listen on (HOST:PORT)")
	fs.StringVar(&o.certFile, "cert", "", "PEM certificate chain")
	fs.StringVar(&o.keyFile, "key", "", "PEM private key")
	fs.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile to FILE when the server stops")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	for _, f := range []struct{ name, v string }{{"addr", o.addr}, {"cert", o.certFile}, {"key", o.keyFile}} {
		if f.v == "" {
			return o, fmt.Errorf("%w: load-server needs --%s", errUsage, f.name)
		}
	}
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return o, fmt.Errorf("%w: --addr %q: %v", errUsage, o.addr, err)
	}
	return o, nil
}

func runLoadServer(args []string, stdout, stderr io.Writer) error {
	o, err := parseLoadServerFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.profile != "" {
		f, err := os.Create(o.profile)
		if err != nil {
			return fmt.Errorf("%w: --cpuprofile: %v", errUsage, err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return loadServeUntil(ctx, o, stdout)
}

// loadServeUntil serves the payloads until ctx ends.
func loadServeUntil(ctx context.Context, o loadServerOptions, stdout io.Writer) error {
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return fmt.Errorf("loading the certificate: %w", err)
	}
	udpAddr, err := net.ResolveUDPAddr("udp", o.addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	conn, err := net.ListenUDP("udp", udpAddr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	defer conn.Close()
	srv := &http3.Server{
		Handler:   payload.Handler(),
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(conn) }()
	if err := json.NewEncoder(stdout).Encode(listeningLine{Listening: conn.LocalAddr().String()}); err != nil {
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
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
		return errors.Join(fmt.Errorf("server: %w", err), cerr)
	}
	return cerr
}
