//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/satquic/satquic/bench"
)

// asSatquicEnv makes the test binary the satquic command, so that bench
// bulk, which starts itself (os.Executable) as its children, runs them for
// real.
const asSatquicEnv = "SATQUIC_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asSatquicEnv) != "" {
		os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestBenchBulk(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dozen processes")
	}
	t.Setenv(asSatquicEnv, "1")
	out := filepath.Join(t.TempDir(), "bulk.json")
	var stdout, stderr bytes.Buffer
	args := []string{"bench", "bulk", "--stacks", "satquic,tcp-tls", "--size", "2MB", "--runs", "2", "--idle-conns", "10",
		"--busy", "--json", out}
	if code := runMain(args, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d:\n%s", code, stderr.String())
	}
	for _, want := range []string{"Bulk goodput", "one core kept busy", "satquic ", "tcp-tls ", "per idle connection"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "run 2/2") {
		t.Errorf("no progress on stderr:\n%s", stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc bench.BulkDocument
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Runs) != 4 || len(doc.Idle) != 1 || doc.Idle[0].Held != 10 || !doc.Metadata.Busy {
		t.Errorf("JSON: %v\n%s", err, b)
	}
}

func TestBenchBulkBadFlags(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "dir", "out.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--size", "ten"}, `--size "ten"`},
		{[]string{"--size", "0"}, `--size "0"`},
		{[]string{"--size", "1MB,2MB"}, `want one positive size`},
		{[]string{"--runs", "0"}, "--runs must be at least 1"},
		{[]string{"--idle-conns", "-1"}, "--idle-conns must be"},
		{[]string{"--timeout", "-1s"}, "--timeout"},
		{[]string{"--stacks", "satquic,lsquic"}, `unknown stack "lsquic"`},
		{[]string{"--stacks", "tcp-tls,tcp-tls"}, "given twice"},
		{[]string{"--quicgo-peer", filepath.Join(t.TempDir(), "nothing")}, "is not a program"},
		{[]string{"--json", missing}, "does not exist"},
		{[]string{"--cpuprofile-dir", missing}, "is not a directory"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"bench", "bulk"}, c.args...), &stdout, &stderr)
		msg := stderr.String()
		if code != 2 || !strings.Contains(msg, c.want) || stdout.Len() != 0 {
			t.Errorf("bench bulk %q: status %d, stderr %q; want status 2 with %q", c.args, code, msg, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "needs server, client or busy"},
		{[]string{"relay"}, `unknown role "relay"`},
		{[]string{"server", "--cert", "/no/c.pem", "--key", "/no/k.pem"}, "loading the certificate"},
		{[]string{"client", "--ca", "/no/c.pem"}, "give one of --size and --conns"},
		{[]string{"client", "--ca", "/no/c.pem", "--size", "1"}, "--ca"},
		{[]string{"client", "--size", "x"}, `--size "x"`},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"bench", "bulk-peer"}, c.args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("bench bulk-peer %q: status %d, stderr %q; want status 2 with %q", c.args, code, stderr.String(), c.want)
		}
	}
}
