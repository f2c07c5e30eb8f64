package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// startServe runs "satquic serve" in-process on a loopback port until the
// test ends, and returns its address and certificate fingerprint.
func startServe(t *testing.T, dir string, extra ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	type ready struct {
		addr string
		fp   string
	}
	readyc := make(chan ready, 1)
	errc := make(chan error, 1)
	var stdout, stderr lockedBuffer
	args := append([]string{"--dir", dir, "--addr", "127.0.0.1:0"}, extra...)
	go func() {
		errc <- serve(ctx, args, &stdout, &stderr, func(a net.Addr, fp string) { readyc <- ready{a.String(), fp} })
	}()
	select {
	case r := <-readyc:
		t.Cleanup(func() {
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("serve: %v", err)
			}
			if !strings.Contains(stdout.String(), "certificate SHA-256: "+r.fp) {
				t.Errorf("serve did not print its fingerprint:\n%s", stdout.String())
			}
		})
		return r.addr, r.fp
	case err := <-errc:
		cancel()
		t.Fatalf("serve: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	return "", ""
}

// runGetCmd runs "satquic get" in-process with a time limit.
func runGetCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	err = get(ctx, args, &out, &errb)
	return out.String(), errb.String(), err
}

func checkNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
				return
			}
		}
	})
}

func TestServeGetEndToEnd(t *testing.T) {
	checkNoGoroutines(t)
	dir := t.TempDir()
	big := make([]byte, 5<<20)
	_, _ = rand.Read(big)
	serveMust(t, os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644))
	serveMust(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	serveMust(t, os.WriteFile(filepath.Join(dir, "sub", "small.txt"), []byte("hello, satellite\n"), 0o644))
	addr, fp := startServe(t, dir, "--max-datagram-size", "1452")
	base := "https://" + addr

	// One file to a file, pinned, with a JSON report.
	out := filepath.Join(t.TempDir(), "big.out")
	stdout, _, err := runGetCmd(t, base+"/big.bin", "-o", out, "--pin", fp, "--json", "--max-datagram-size", "1452")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("downloaded %d bytes, want the %d served (%v)", len(got), len(big), err)
	}
	var rep getReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, stdout)
	}
	if rep.Bytes != int64(len(big)) || rep.GoodputMbps <= 0 || rep.HandshakeMs <= 0 || rep.SmoothedRTTMs <= 0 ||
		rep.PacketsRecv < uint64(len(big)/1452) || len(rep.Files) != 1 || rep.Files[0].Output != out || rep.Version != "v1" {
		t.Errorf("report: %+v", rep)
	}

	// Several files at once into a directory, --insecure, text report.
	outDir := t.TempDir()
	_, stderr, err := runGetCmd(t, "--insecure", base+"/big.bin", base+"/sub/small.txt", "-o", outDir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(outDir, "small.txt")); string(got) != "hello, satellite\n" {
		t.Errorf("small.txt: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(outDir, "big.bin")); !bytes.Equal(got, big) {
		t.Errorf("big.bin: %d bytes", len(got))
	}
	for _, want := range []string{"Mbit/s", "handshake", "RTT", "lost", "retransmitted", "small.txt: 17 bytes (ok)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}

	// To stdout.
	stdout, _, err = runGetCmd(t, base+"/sub/small.txt", "--pin", fp)
	if err != nil || stdout != "hello, satellite\n" {
		t.Errorf("to stdout: %q, %v", stdout, err)
	}

	// Missing files, and paths that try to leave the directory: the
	// output file is not left behind.
	secret := filepath.Join(filepath.Dir(dir), "secret-"+filepath.Base(dir))
	serveMust(t, os.WriteFile(secret, []byte("secret"), 0o644))
	defer os.Remove(secret)
	serveMust(t, os.Symlink(secret, filepath.Join(dir, "escape")))
	for _, p := range []string{"/missing", "/escape", "/sub", "/../" + filepath.Base(secret), "/%2e%2e/" + filepath.Base(secret)} {
		o := filepath.Join(t.TempDir(), "x")
		_, _, err := runGetCmd(t, base+p, "-o", o, "--pin", fp)
		if err == nil || (!strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "0x190")) {
			t.Errorf("GET %s: %v", p, err)
		}
		if _, serr := os.Stat(o); serr == nil {
			t.Errorf("GET %s left %s behind", p, o)
		}
	}

	// Certificates: unverifiable without --pin or --insecure, and a
	// wrong pin is refused.
	if _, _, err := runGetCmd(t, base+"/sub/small.txt"); err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "--pin") {
		t.Errorf("self-signed certificate without --pin: %v", err)
	}
	wrong := strings.Repeat("ab", 32)
	if _, _, err := runGetCmd(t, base+"/sub/small.txt", "--pin", wrong); err == nil || !strings.Contains(err.Error(), "pinned") {
		t.Errorf("wrong pin: %v", err)
	}
}

func TestServeGetBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"serve"},
		{"serve", "--dir", filepath.Join(dir, "nonexistent")},
		{"serve", "--dir", dir, "--cert", "c.pem"},
		{"serve", "--dir", dir, "extra"},
		{"get"},
		{"get", "http://localhost/x"},
		{"get", "https://a:1/x", "https://b:1/y", "-o", dir},
		{"get", "https://a:1/x", "https://a:1/y"},
		{"get", "https://a:1/x", "--insecure", "--pin", strings.Repeat("00", 32)},
		{"get", "https://a:1/x", "--pin", "zz"},
		{"get", "https://a:1/x", "--bogus"},
		{"get", "https://a:1/x/y", "https://a:1/z/y", "-o", dir},
	} {
		var stdout, stderr bytes.Buffer
		if code := runMain(args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", args, code, stderr.String())
		} else if lines := strings.Count(strings.TrimSpace(stderr.String()), "\n"); lines > 0 {
			t.Errorf("%q: %d lines of error, want one:\n%s", args, lines+1, stderr.String())
		}
	}
	// Nobody listening: a clear error within the handshake timeout.
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := runMain([]string{"get", "https://127.0.0.1:9/x", "--insecure", "--handshake-timeout", "500ms"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "handshake") || time.Since(start) > 5*time.Second {
		t.Errorf("no server: exit %d after %v: %q", code, time.Since(start), stderr.String())
	}
}

func serveMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestServeGetResume: with --resume, the second connection resumes the
// session and sends its requests in 0-RTT where the server accepts it;
// both tools write qlogs; --retry costs the first connection only.
func TestServeGetResume(t *testing.T) {
	checkNoGoroutines(t)
	dir := t.TempDir()
	serveMust(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("first file\n"), 0o644))
	serveMust(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("second file\n"), 0o644))
	qlogs := t.TempDir()
	addr, fp := startServe(t, dir, "--0rtt", "--retry", "--qlog-dir", qlogs)
	base := "https://" + addr

	outDir := t.TempDir()
	_, stderr, err := runGetCmd(t, "--resume", "--pin", fp, "--qlog-dir", qlogs, base+"/a.txt", base+"/b.txt", "-o", outDir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for name, want := range map[string]string{"a.txt": "first file\n", "b.txt": "second file\n"} {
		if got, _ := os.ReadFile(filepath.Join(outDir, name)); string(got) != want {
			t.Errorf("%s: %q", name, got)
		}
	}
	for _, want := range []string{"session: new", "second connection:", "session: resumed, 0-RTT accepted", "b.txt: 12 bytes (ok)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, stderr)
		}
	}

	// One URL, fetched twice, with a JSON report.
	stdout, _, err := runGetCmd(t, "--resume", "--pin", fp, base+"/a.txt", "--json", "-o", filepath.Join(outDir, "a2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var rep getReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, stdout)
	}
	if rep.Resumed || rep.Session != sessionNew || rep.Resumption == nil || !rep.Resumption.Resumed || !rep.Resumption.Used0RTT ||
		rep.Resumption.Bytes != int64(len("first file\n")) || rep.Resumption.Session != session0RTT {
		t.Errorf("report: %+v, second connection %+v", rep, rep.Resumption)
	}
	if got, _ := os.ReadFile(filepath.Join(outDir, "a2.txt")); string(got) != "first file\n" {
		t.Errorf("a2.txt: %q", got)
	}

	// Four connections of the command above, two of this one: each end
	// of each wrote its qlog.
	clients, _ := filepath.Glob(filepath.Join(qlogs, "*_client.sqlog"))
	servers, _ := filepath.Glob(filepath.Join(qlogs, "*_server.sqlog"))
	if len(clients) != 2 || len(servers) != 4 {
		t.Errorf("qlogs: %d of clients, %d of the server; want 2 and 4", len(clients), len(servers))
	}
	for _, c := range clients {
		if _, err := os.Stat(strings.TrimSuffix(c, "_client.sqlog") + "_server.sqlog"); err != nil {
			t.Errorf("no server qlog for %s", filepath.Base(c))
		}
	}
}

// TestServeGetResumeWithout0RTT: a server without --0rtt resumes the
// session but gives no 0-RTT, and the summary says so.
func TestServeGetResumeWithout0RTT(t *testing.T) {
	checkNoGoroutines(t)
	dir := t.TempDir()
	serveMust(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x"), 0o644))
	addr, fp := startServe(t, dir)
	stdout, _, err := runGetCmd(t, "--resume", "--pin", fp, "https://"+addr+"/a.txt", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var rep getReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if r := rep.Resumption; r == nil || !r.Resumed || r.Used0RTT || r.Session != sessionResumed {
		t.Errorf("second connection: %+v", r)
	}
}
