package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/satquic/satquic/bench/load"
	"github.com/satquic/satquic/bench/load/payload"
)

// TestLoadServer runs satquic's load generator against the quic-go load
// server: the bodies are satquic's payloads, byte for byte.
func TestLoadServer(t *testing.T) {
	certFile, keyFile := writeTestCertificate(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := loadServeUntil(ctx, loadServerOptions{addr: "127.0.0.1:0", certFile: certFile, keyFile: keyFile}, pw)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("load-server: %v", err)
		}
	}()
	line, err := bufio.NewReader(pr).ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the announced address: %v", err)
	}
	go io.Copy(io.Discard, pr)
	var l listeningLine
	if err := json.Unmarshal(line, &l); err != nil {
		t.Fatalf("announcement %q: %v", line, err)
	}
	tlsConf := &tls.Config{InsecureSkipVerify: true}
	for _, newConn := range []bool{false, true} {
		res, err := load.Run(context.Background(), load.Options{
			URL: "https://" + l.Listening + payload.Prefix + "5120", Workers: 4, Requests: 3, NewConn: newConn,
			TLS: tlsConf, ExpectBody: payload.Body(5120),
		})
		if err != nil {
			t.Fatal(err)
		}
		wantConns := int64(1)
		if newConn {
			wantConns = 12
		}
		if res.Succeeded != 12 || res.Errors != 0 || res.Connections != wantConns {
			t.Errorf("new-conn %v: %d succeeded, %d errors %v, %d connections; want 12, 0, %d",
				newConn, res.Succeeded, res.Errors, res.ErrorExamples, res.Connections, wantConns)
		}
	}
	res, err := load.Run(context.Background(), load.Options{
		URL: "https://" + l.Listening + "/other", Workers: 1, Requests: 2, TLS: tlsConf,
	})
	if err != nil || res.ErrorsByKind["status_404"] != 2 {
		t.Errorf("GET /other: %v, errors %v", err, res.ErrorsByKind)
	}
}

func TestLoadServerFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "needs --addr"},
		{[]string{"--addr", "127.0.0.1:0", "--cert", "c.pem"}, "needs --key"},
		{[]string{"--addr", "nowhere", "--cert", "c", "--key", "k"}, "--addr"},
		{[]string{"--addr", "127.0.0.1:0", "--cert", "/no/such.pem", "--key", "/no/such.key"}, "loading the certificate"},
		{[]string{"--bogus"}, "flag provided but not defined"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		var stdout, stderr bytes.Buffer
		err := dispatch(append([]string{"load-server"}, c.args...), &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("load-server %q: %v, want an error with %q", c.args, err, c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	// Help is not a failure.
	if err := dispatch([]string{"load-server", "--help"}, &stdout, &stderr); (err != nil && !errors.Is(err, flag.ErrHelp)) ||
		!strings.Contains(stderr.String(), payload.Prefix) {
		t.Errorf("--help: %v, %q", err, stderr.String())
	}
}
