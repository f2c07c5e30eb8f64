//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/bench/load"
	"github.com/satquic/satquic/bench/load/payload"
	"github.com/satquic/satquic/bench/loadcmp"
	"github.com/satquic/satquic/http3"
)

func TestBenchLoadBadFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "dir", "out.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--payloads", "30,ten"}, `size "ten"`},
		{[]string{"--payloads", "30,30"}, "given twice"},
		{[]string{"--payloads", "0"}, `size "0"`},
		{[]string{"-c", "0"}, "-c must be"},
		{[]string{"-c", "4", "--conns", "5"}, "--conns must be from 1 to -c"},
		{[]string{"--conns", "0"}, "--conns must be"},
		{[]string{"-d", "0s"}, "-d must be positive"},
		{[]string{"--warmup", "-1s"}, "--warmup"},
		{[]string{"--runs", "0"}, "--runs must be at least 1"},
		{[]string{"--connections-only", "--cps=false"}, "exclude each other"},
		{[]string{"--stacks", "satquic,lsquic"}, `unknown stack "lsquic"`},
		{[]string{"--stacks", "quic-go,quic-go"}, "given twice"},
		{[]string{"--quicgo-peer", filepath.Join(t.TempDir(), "nothing")}, "is not a program"},
		{[]string{"--json", missing}, "does not exist"},
		{[]string{"--csv", missing}, "does not exist"},
		{[]string{"--nope"}, "flag provided but not defined"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"bench", "load"}, c.args...), &stdout, &stderr)
		msg := stderr.String()
		if code != 2 || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") != 1 || stdout.Len() != 0 {
			t.Errorf("bench load %q: status %d, stderr %q; want status 2 and one line with %q", c.args, code, msg, c.want)
		}
	}
}

func TestBenchLoadServerBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--addr is required"},
		{[]string{"--addr", "127.0.0.1:0", "--cert", "c.pem"}, "--key is required"},
		{[]string{"--addr", "127.0.0.1:0", "--cert", "/no/c.pem", "--key", "/no/k.pem"}, "loading the certificate"},
		{[]string{"--bogus"}, "flag provided but not defined"},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"bench", "load-server"}, c.args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) || stdout.Len() != 0 {
			t.Errorf("bench load-server %q: status %d, stderr %q; want status 2 with %q", c.args, code, stderr.String(), c.want)
		}
	}
}

func TestBenchLoadHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"bench", "load", "--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "quicgo-peer") {
		t.Errorf("--help: status %d, %q", code, stdout.String())
	}
	stdout.Reset()
	if code := runMain([]string{"bench", "--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "load ") {
		t.Errorf("bench --help: status %d, %q", code, stdout.String())
	}
}

// TestBenchLoadServerRefusesNoOne: the load server's configuration lets
// one source open many connections at once, as bench load's
// new-connections measurement does; the default limits (32 handshakes
// of a source) would refuse some of them.
func TestBenchLoadServerRefusesNoOne(t *testing.T) {
	dir := t.TempDir()
	certs, err := loadcmp.WriteCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{
		Handler:    payload.Handler(),
		TLSConfig:  http3.ConfigureTLS(&tls.Config{Certificates: []tls.Certificate{certs.TLS}}),
		QUICConfig: benchLoadServerConfig(),
	}
	l, err := srv.Listen(udp)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	res, err := load.Run(context.Background(), load.Options{
		URL:     "https://" + udp.LocalAddr().String() + payload.Prefix + "1024",
		Workers: 128, Duration: 700 * time.Millisecond, NewConn: true, Resume: true,
		Timeout: 20 * time.Second, TLS: certs.ClientTLS(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Connections == 0 {
		t.Fatalf("%d connections, %d errors: %v", res.Connections, res.Errors, res.ErrorExamples)
	}
}

// A profile that cannot be written is a usage error before the server
// listens.
func TestBenchLoadServerProfilePaths(t *testing.T) {
	certs, err := loadcmp.WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--cpuprofile", "--memprofile"} {
		var stdout, stderr bytes.Buffer
		args := []string{"bench", "load-server", "--addr", "127.0.0.1:0", "--cert", certs.CertFile, "--key", certs.KeyFile,
			flag, filepath.Join(t.TempDir(), "missing", "p.prof")}
		code := runMain(args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), flag) || stdout.Len() != 0 {
			t.Errorf("%s into a missing directory: status %d, stderr %q; want status 2 naming the flag", flag, code, stderr.String())
		}
	}
}
