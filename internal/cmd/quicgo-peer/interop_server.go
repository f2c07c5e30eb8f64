package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// interop-server: quic-go as the server of a QUIC interop runner test, for
// satquic's interop matrix: the files of a directory over hq-interop or
// HTTP/3, with the settings the test asks for (Retry, 0-RTT).
func init() {
	register(subcommand{
		name:    "interop-server",
		summary: "serve a directory over hq-interop or HTTP/3 as an interop runner test's server",
		run:     runInteropServer,
	})
}

const interopServerSynopsis = `interop-server --addr HOST:PORT --cert FILE --key FILE --www DIR [--alpn hq-interop|h3] [--test NAME] [--keylog FILE]

Serves the files under DIR until SIGINT or SIGTERM, over hq-interop (a
request is "GET /path" on a bidirectional stream, the answer the file and
a FIN) or HTTP/3. --test is the interop runner's test: retry sends every
client a Retry, zerortt accepts 0-RTT; the others need nothing special.
--keylog appends the TLS secrets to FILE (NSS key log format), so that a
capture can be decrypted. Once listening it prints {"listening":"HOST:PORT"}.`

type interopServerOptions struct {
	addr, cert, key, www, alpn, test, keyLog string
}

func runInteropServer(args []string, stdout, stderr io.Writer) error {
	var o interopServerOptions
	fs := newFlagSet("interop-server", interopServerSynopsis, stderr)
	fs.StringVar(&o.addr, "addr", "", "UDP address to listen on")
	fs.StringVar(&o.cert, "cert", "", "PEM certificate chain")
	fs.StringVar(&o.key, "key", "", "PEM private key")
	fs.StringVar(&o.www, "www", "", "directory to serve")
	fs.StringVar(&o.alpn, "alpn", alpnHQ, "application protocol: hq-interop or h3")
	fs.StringVar(&o.test, "test", "transfer", "the interop runner's test")
	fs.StringVar(&o.keyLog, "keylog", "", "append TLS secrets to this file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.addr == "" || o.cert == "" || o.key == "" || o.www == "" {
		return fmt.Errorf("%w: interop-server needs --addr, --cert, --key and --www", errUsage)
	}
	if o.alpn != alpnHQ && o.alpn != http3.NextProtoH3 {
		return fmt.Errorf("%w: --alpn %q: want %s or %s", errUsage, o.alpn, alpnHQ, http3.NextProtoH3)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return interopServe(ctx, o, stdout, stderr)
}

// alpnHQ is the application protocol of the runner's HTTP/0.9.
const alpnHQ = "hq-interop"

func interopServe(ctx context.Context, o interopServerOptions, stdout, stderr io.Writer) error {
	cert, err := tls.LoadX509KeyPair(o.cert, o.key)
	if err != nil {
		return fmt.Errorf("loading the certificate: %w", err)
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{o.alpn}}
	if o.keyLog != "" {
		f, err := os.OpenFile(o.keyLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		tlsConf.KeyLogWriter = f
	}
	root, err := os.OpenRoot(o.www)
	if err != nil {
		return err
	}
	defer root.Close()
	udpAddr, err := net.ResolveUDPAddr("udp", o.addr)
	if err != nil {
		return err
	}
	conn, err := net.ListenUDP("udp", udpAddr)
	if err != nil {
		return err
	}
	defer conn.Close()
	retry := o.test == "retry"
	tr := &quic.Transport{Conn: conn, VerifySourceAddress: func(net.Addr) bool { return retry }}
	defer tr.Close()
	ln, err := tr.ListenEarly(tlsConf, &quic.Config{Allow0RTT: o.test == "zerortt"})
	if err != nil {
		return err
	}
	defer ln.Close()
	done := make(chan error, 1)
	if o.alpn == alpnHQ {
		go func() { done <- serveHQListener(ctx, ln, root, stderr) }()
	} else {
		srv := &http3.Server{Handler: http.FileServerFS(root.FS())}
		defer srv.Close()
		go func() { done <- srv.ServeListener(ln) }()
	}
	if err := json.NewEncoder(stdout).Encode(listeningLine{Listening: conn.LocalAddr().String()}); err != nil {
		return err
	}
	select {
	case err := <-done:
		return fmt.Errorf("server stopped: %w", err)
	case <-ctx.Done():
		return nil
	}
}

// serveHQListener answers hq-interop requests on every connection.
func serveHQListener(ctx context.Context, ln *quic.EarlyListener, root *os.Root, stderr io.Writer) error {
	logger := log.New(stderr, "", log.LstdFlags)
	for {
		c, err := ln.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, quic.ErrServerClosed) {
				return nil
			}
			return err
		}
		go func() {
			for {
				st, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				go func() {
					if err := serveHQStream(st, root); err != nil {
						logger.Printf("stream %d: %v", st.StreamID(), err)
					}
				}()
			}
		}()
	}
}

// hqNotFound is the stream error of a request for no file (HTTP's 404).
const hqNotFound = 0x194

// serveHQStream reads one request, to the end of the client's side of
// the stream, and answers it with the file and a FIN.
func serveHQStream(st *quic.Stream, root *os.Root) error {
	req, err := io.ReadAll(io.LimitReader(st, 8<<10))
	if err != nil {
		st.CancelWrite(hqNotFound)
		return err
	}
	name, ok := hqRequestPath(string(req))
	if !ok {
		st.CancelWrite(hqNotFound)
		return fmt.Errorf("bad request %q", truncate(string(req)))
	}
	f, err := root.Open(name)
	if err != nil {
		st.CancelWrite(hqNotFound)
		return err
	}
	defer f.Close()
	if _, err := io.Copy(st, f); err != nil {
		return err
	}
	return st.Close()
}
