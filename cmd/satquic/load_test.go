package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/bench/load/payload"
	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/internal/testkit/h3test"
)

// startLoadTarget serves h with satquic's HTTP/3 server on loopback until
// the test ends; it returns the base URL and the certificate's SHA-256.
func startLoadTarget(t *testing.T, h http.Handler) (string, string) {
	t.Helper()
	cert, err := hq.SelfSigned([]string{"localhost", "127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return h3test.Serve(t, h, cert), hq.Fingerprint(cert.Certificate[0])
}

func TestLoadJSON(t *testing.T) {
	base, pin := startLoadTarget(t, payload.Handler())
	for _, extra := range [][]string{nil, {"--new-conn"}, {"--conns", "2", "--insecure"}} {
		args := append([]string{"load", "-u", base + "/bytes/1024", "-c", "3", "-n", "4", "--json", "--check-payload"}, extra...)
		if len(extra) == 0 || extra[0] != "--conns" {
			args = append(args, "--pin", pin)
		}
		var stdout, stderr bytes.Buffer
		if code := runMain(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%q: status %d: %s", args, code, stderr.String())
		}
		var res struct {
			RPS         float64            `json:"requests_per_second"`
			CPS         float64            `json:"connections_per_second"`
			Errors      *int64             `json:"errors"`
			Succeeded   int64              `json:"succeeded"`
			Connections int64              `json:"connections"`
			Latency     map[string]float64 `json:"latency_ms"`
		}
		dec := json.NewDecoder(&stdout)
		if err := dec.Decode(&res); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if dec.More() {
			t.Errorf("%q: more than one JSON value on stdout", args)
		}
		wantConns := map[string]int64{"": 1, "--new-conn": 12, "--conns": 2}[strings.Join(extra[:min(len(extra), 1)], "")]
		if res.Succeeded != 12 || res.Errors == nil || *res.Errors != 0 || res.RPS <= 0 || res.CPS <= 0 || res.Connections != wantConns {
			t.Errorf("%q: %+v; want 12 successes over %d connections", args, res, wantConns)
		}
		for _, k := range []string{"p50", "p90", "p99", "p999"} {
			if res.Latency[k] <= 0 {
				t.Errorf("%q: latency_ms.%s = %v", args, k, res.Latency[k])
			}
		}
	}
}

func TestLoadText(t *testing.T) {
	base, pin := startLoadTarget(t, payload.Handler())
	var stdout, stderr bytes.Buffer
	code := runMain([]string{"load", "-u", base + "/bytes/30", "-c", "2", "-d", "200ms", "--pin", pin}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	for _, want := range []string{"requests/s", "connections/s", "transfer", "p99.9", "errors        none"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestLoadFailures(t *testing.T) {
	base, pin := startLoadTarget(t, payload.Handler())
	// Every request gets a 404: the kind is counted and the command fails.
	var stdout, stderr bytes.Buffer
	code := runMain([]string{"load", "-u", base + "/missing", "-c", "2", "-n", "2", "--pin", pin, "--json"}, &stdout, &stderr)
	var res struct {
		Errors int64            `json:"errors"`
		ByKind map[string]int64 `json:"errors_by_kind"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	if code != 1 || res.Errors != 4 || res.ByKind["status_404"] != 4 || !strings.Contains(stderr.String(), "no request succeeded") {
		t.Errorf("404s: status %d, %+v, stderr %q", code, res, stderr.String())
	}
	// Without --pin the self-signed certificate fails the handshake, and
	// the message says what to do.
	stdout.Reset()
	stderr.Reset()
	code = runMain([]string{"load", "-u", base + "/bytes/1", "-c", "1", "-n", "1"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "connect: 1") || !strings.Contains(stderr.String(), "--pin") {
		t.Errorf("unverified server: status %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestLoadBadFlags(t *testing.T) {
	u := "https://127.0.0.1:4433/bytes/30"
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-u URL is required"},
		{[]string{"-u", "http://x/"}, "https://"},
		{[]string{"-u", "https://:99/"}, "no host"},
		{[]string{"-u", "https://h:70000/"}, "port"},
		{[]string{"-u", "::"}, "-u"},
		{[]string{"-u", u, "-c", "0"}, "-c must be"},
		{[]string{"-u", u, "-n", "-1"}, "-n must not be negative"},
		{[]string{"-u", u, "-n", "5", "-d", "1s"}, "exclude each other"},
		{[]string{"-u", u, "-d", "0s"}, "-d must be positive"},
		{[]string{"-u", u, "-d", "-1s"}, "-d must be positive"},
		{[]string{"-u", u, "--timeout", "0s"}, "--timeout"},
		{[]string{"-u", u, "--warmup", "-1s"}, "--warmup"},
		{[]string{"-u", u, "--new-conn", "--conns", "2"}, "exclude each other"},
		{[]string{"-u", u, "-c", "2", "--conns", "3"}, "--conns must be from 1 to -c"},
		{[]string{"-u", u, "--insecure", "--pin", "ab"}, "exclude each other"},
		{[]string{"-u", u, "--pin", "xyz"}, "--pin"},
		{[]string{"-u", u, "--max-datagram-size", "100"}, "--max-datagram-size"},
		{[]string{"-u", "https://h/other", "--check-payload"}, "--check-payload needs"},
		{[]string{"-u", u, "-c", "x"}, "invalid value"},
		{[]string{"-u", u, "--bogus"}, "flag provided but not defined"},
		{[]string{"-u", u, "extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"load"}, c.args...), &stdout, &stderr)
		msg := stderr.String()
		if code != 2 || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") != 1 || stdout.Len() != 0 {
			t.Errorf("load %q: status %d, stderr %q; want status 2 and one line with %q", c.args, code, msg, c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"load", "--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "requests_per_second") {
		t.Errorf("--help: status %d, %q", code, stdout.String())
	}
}

// TestLoadResponsesLongerThanTheRun: against a response larger than -d
// allows, load reports the bytes that moved (it said 0 B/s and failed
// with "no request succeeded" while gigabytes streamed) and says why no
// request completed.
func TestLoadResponsesLongerThanTheRun(t *testing.T) {
	endless := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		block := make([]byte, 64<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(block); err != nil {
				return
			}
		}
	})
	base, pin := startLoadTarget(t, endless)
	var stdout, stderr bytes.Buffer
	args := []string{"load", "-u", base + "/endless", "--pin", pin, "-c", "2", "-d", "1s", "--json"}
	if code := runMain(args, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	var res struct {
		Unfinished int64   `json:"unfinished"`
		Bytes      int64   `json:"bytes"`
		Rate       float64 `json:"bytes_per_second"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if res.Unfinished != 2 || res.Bytes <= 0 || res.Rate <= 0 {
		t.Errorf("%+v: want 2 requests cut off and their bytes counted", res)
	}
	if !strings.Contains(stderr.String(), "no request completed") {
		t.Errorf("no note on stderr: %q", stderr.String())
	}
}
