package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/quic-go/quic-go"
)

// bulk-server: quic-go's side of "satquic bench bulk", default
// configuration but for the idle timeout (bulk.go).
func init() {
	register(subcommand{
		name:    "bulk-server",
		summary: "serve the bulk protocol of satquic bench bulk over quic-go (raw QUIC streams)",
		run: func(args []string, stdout, stderr io.Writer) error {
			return runBulkServer(args, os.Stdin, stdout, stderr)
		},
	})
}

const bulkServerSynopsis = `bulk-server --addr HOST:PORT --cert FILE --key FILE [--idle] [--cpuprofile FILE]

Serves the bulk protocol of "satquic bench bulk" until its standard input
ends: prints {"listening":"HOST:PORT"}, then a JSON memory report for every
"mem" line it reads. --idle holds connections without serving them.`

type bulkServerOptions struct {
	addr, certFile, keyFile, profile string
	idle                             bool
}

func runBulkServer(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var o bulkServerOptions
	fs := newFlagSet("bulk-server", bulkServerSynopsis, stderr)
	fs.StringVar(&o.addr, "addr", "", "UDP address to listen on (HOST:PORT)")
	fs.StringVar(&o.certFile, "cert", "", "PEM certificate chain")
	fs.StringVar(&o.keyFile, "key", "", "PEM private key")
	fs.BoolVar(&o.idle, "idle", false, "hold connections without serving them (idle memory)")
	fs.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile to FILE")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"addr", o.addr}, {"cert", o.certFile}, {"key", o.keyFile}} {
		if f.v == "" {
			return fmt.Errorf("%w: bulk-server needs --%s", errUsage, f.name)
		}
	}
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return fmt.Errorf("loading the certificate: %w", err)
	}
	stopProfile, err := startProfile(o.profile)
	if err != nil {
		return err
	}
	defer stopProfile()
	ln, err := quic.ListenAddr(o.addr, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{bulkALPN}},
		&quic.Config{MaxIdleTimeout: bulkIdleTimeout})
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	out := &jsonLines{W: stdout}
	out.Write(listeningLine{Listening: ln.Addr().String()})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &bulkServer{idle: o.idle}
	go func() {
		serveMemRequests(stdin, out, s.conns)
		stop()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.serve(ctx, ln)
	}()
	<-ctx.Done()
	err = ln.Close()
	<-done
	return err
}

// bulkServer accepts connections and serves them, or, idle, holds them in
// a slice (no goroutine each, whose stack would be the harness's memory).
type bulkServer struct {
	idle  bool
	mu    sync.Mutex
	held  []*quic.Conn
	count int
	wg    sync.WaitGroup
}

func (s *bulkServer) conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

func (s *bulkServer) serve(ctx context.Context, ln *quic.Listener) {
	defer s.wg.Wait()
	for {
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.count++
		if s.idle {
			s.held = append(s.held, c)
		}
		s.mu.Unlock()
		if s.idle {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				s.count--
				s.mu.Unlock()
			}()
			s.serveConn(ctx, c)
		}()
	}
}

func (s *bulkServer) serveConn(ctx context.Context, c *quic.Conn) {
	defer c.CloseWithError(0, "")
	for {
		st, err := c.AcceptStream(ctx)
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			n, err := parseBulkRequest(st)
			if err != nil {
				st.CancelWrite(1)
				return
			}
			if writeBulk(st, n) == nil {
				_ = st.Close()
			}
		}()
	}
}
