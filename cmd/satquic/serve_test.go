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

// serveHandle is a "satquic serve" running in-process on a loopback port.
type serveHandle struct {
	addr, fp       string
	stdout, stderr *lockedBuffer
	cancel         context.CancelFunc
	errc           chan error
	stopped        bool
}

// startServe runs "satquic serve" until the test ends, and returns its
// address and certificate fingerprint.
func startServe(t *testing.T, dir string, extra ...string) (string, string) {
	t.Helper()
	h := startServeHandle(t, dir, extra...)
	return h.addr, h.fp
}

// startServeHandle runs "satquic serve" until stop or the end of the
// test.
func startServeHandle(t *testing.T, dir string, extra ...string) *serveHandle {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	type ready struct {
		addr string
		fp   string
	}
	readyc := make(chan ready, 1)
	h := &serveHandle{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, cancel: cancel, errc: make(chan error, 1)}
	args := append([]string{"--dir", dir, "--addr", "127.0.0.1:0"}, extra...)
	go func() {
		h.errc <- serve(ctx, args, h.stdout, h.stderr, func(a net.Addr, fp string) { readyc <- ready{a.String(), fp} })
	}()
	select {
	case r := <-readyc:
		h.addr, h.fp = r.addr, r.fp
		t.Cleanup(func() {
			if !h.stopped {
				if err := h.stop(t); err != nil {
					t.Errorf("serve: %v", err)
				}
			}
			if !strings.Contains(h.stdout.String(), "certificate SHA-256: "+r.fp) {
				t.Errorf("serve did not print its fingerprint:\n%s", h.stdout.String())
			}
		})
		return h
	case err := <-h.errc:
		cancel()
		t.Fatalf("serve: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	return nil
}

// stop interrupts the server, as SIGINT does, and returns what serve
// returned once it is done.
func (h *serveHandle) stop(t *testing.T) error {
	t.Helper()
	h.stopped = true
	h.cancel()
	select {
	case err := <-h.errc:
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
		return nil
	}
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

// TestServeGetEndToEnd downloads from one server in each protocol, with
// --alpn forcing the client's choice.
func TestServeGetEndToEnd(t *testing.T) {
	checkNoGoroutines(t)
	dir := t.TempDir()
	big := make([]byte, 5<<20)
	_, _ = rand.Read(big)
	serveMust(t, os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644))
	serveMust(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	serveMust(t, os.WriteFile(filepath.Join(dir, "sub", "small.txt"), []byte("hello, satellite\n"), 0o644))
	secret := filepath.Join(filepath.Dir(dir), "secret-"+filepath.Base(dir))
	serveMust(t, os.WriteFile(secret, []byte("secret"), 0o644))
	defer os.Remove(secret)
	serveMust(t, os.Symlink(secret, filepath.Join(dir, "escape")))
	addr, fp := startServe(t, dir, "--max-datagram-size", "1452")
	base := "https://" + addr

	for _, alpn := range []string{"h3", "hq-interop"} {
		t.Run(alpn, func(t *testing.T) {
			get := func(args ...string) (string, string, error) {
				return runGetCmd(t, append(args, "--alpn", alpn)...)
			}
			// One file to a file, pinned, with a JSON report.
			out := filepath.Join(t.TempDir(), "big.out")
			stdout, _, err := get(base+"/big.bin", "-o", out, "--pin", fp, "--json", "--max-datagram-size", "1452")
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
				rep.PacketsRecv < uint64(len(big)/1452) || len(rep.Files) != 1 || rep.Files[0].Output != out || rep.Version != "v1" ||
				rep.Protocol != alpn || rep.Files[0].Bytes != int64(len(big)) || rep.Server != addr {
				t.Errorf("report: %+v", rep)
			}
			if wantStatus := map[string]int{"h3": 200, "hq-interop": 0}[alpn]; rep.Files[0].Status != wantStatus {
				t.Errorf("status %d, want %d", rep.Files[0].Status, wantStatus)
			}

			// Several files at once on one connection into a
			// directory, --insecure, text report.
			outDir := t.TempDir()
			_, stderr, err := get("--insecure", base+"/big.bin", base+"/sub/small.txt", "-o", outDir)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(outDir, "small.txt")); string(got) != "hello, satellite\n" {
				t.Errorf("small.txt: %q", got)
			}
			if got, _ := os.ReadFile(filepath.Join(outDir, "big.bin")); !bytes.Equal(got, big) {
				t.Errorf("big.bin: %d bytes", len(got))
			}
			for _, want := range []string{"Mbit/s", "handshake", "RTT", "lost", "retransmitted", "small.txt: 17 bytes (ok)", alpn + " over QUIC v1"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("summary lacks %q:\n%s", want, stderr)
				}
			}

			// To stdout.
			stdout, _, err = get(base+"/sub/small.txt", "--pin", fp)
			if err != nil || stdout != "hello, satellite\n" {
				t.Errorf("to stdout: %q, %v", stdout, err)
			}

			// Missing files, and paths that try to leave the
			// directory: an error, and the output file is not left
			// behind. Over HTTP/3, /sub is a directory listing.
			bad := []string{"/missing", "/escape", "/../" + filepath.Base(secret), "/%2e%2e/" + filepath.Base(secret)}
			if alpn == "hq-interop" {
				bad = append(bad, "/sub")
			}
			for _, p := range bad {
				o := filepath.Join(t.TempDir(), "x")
				_, _, err := get(base+p, "-o", o, "--pin", fp)
				if err == nil || !(strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "0x190") ||
					strings.Contains(err.Error(), "HTTP status 404 Not Found") || strings.Contains(err.Error(), "HTTP status 400 Bad Request")) {
					t.Errorf("GET %s: %v", p, err)
				}
				if _, serr := os.Stat(o); serr == nil {
					t.Errorf("GET %s left %s behind", p, o)
				}
			}
			// One failure among several: the file that arrived is
			// kept, the other leaves nothing behind.
			outDir = t.TempDir()
			if _, _, err := get("--pin", fp, base+"/sub/small.txt", base+"/missing", "-o", outDir); err == nil {
				t.Error("a missing file among two: no error")
			}
			if left := dirNames(t, outDir); len(left) != 1 || left[0] != "small.txt" {
				t.Errorf("after one of two downloads failed, the directory holds %q, want [small.txt]", left)
			}

			// Certificates: unverifiable without --pin or --insecure,
			// and a wrong pin is refused.
			if _, _, err := get(base + "/sub/small.txt"); err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "--pin") {
				t.Errorf("self-signed certificate without --pin: %v", err)
			}
			wrong := strings.Repeat("ab", 32)
			if _, _, err := get(base+"/sub/small.txt", "--pin", wrong); err == nil || !strings.Contains(err.Error(), "pinned") {
				t.Errorf("wrong pin: %v", err)
			}
		})
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
		{"get", "https://a:1/x", "--alpn", "h2"},
		{"get", "https://a:1/x", "--alpn", ""},
		{"serve", "--dir", dir, "--alpn", "h3,h3"},
		{"serve", "--dir", dir, "--alpn", "hq-interop,"},
		{"serve", "--dir", dir, "--shutdown-timeout", "-1s"},
		{"serve", "--dir", dir, "--addr", "not an address"},
		{"serve", "--dir", dir, "--max-handshakes", "0"},
		{"serve", "--dir", dir, "--max-conns-per-ip", "-1"},
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--debug-addr", "not an address"},
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
// session and sends its requests in 0-RTT where the server accepts it, in
// either protocol; both tools write qlogs; --retry costs the first
// connection only.
func TestServeGetResume(t *testing.T) {
	checkNoGoroutines(t)
	dir := t.TempDir()
	serveMust(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("first file\n"), 0o644))
	serveMust(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("second file\n"), 0o644))
	for _, alpn := range []string{"h3", "hq-interop"} {
		t.Run(alpn, func(t *testing.T) {
			qlogs := t.TempDir()
			addr, fp := startServe(t, dir, "--0rtt", "--retry", "--qlog-dir", qlogs, "--alpn", alpn)
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
			for _, want := range []string{"session: new", "second connection:", "session: resumed, 0-RTT accepted", "b.txt: 12 bytes (ok)", alpn + " over QUIC"} {
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
			if rep.Resumed || rep.Session != sessionNew || rep.Protocol != alpn || rep.Resumption == nil || !rep.Resumption.Resumed ||
				!rep.Resumption.Used0RTT || rep.Resumption.Bytes != int64(len("first file\n")) || rep.Resumption.Session != session0RTT ||
				rep.Resumption.Protocol != alpn {
				t.Errorf("report: %+v, second connection %+v", rep, rep.Resumption)
			}
			if got, _ := os.ReadFile(filepath.Join(outDir, "a2.txt")); string(got) != "first file\n" {
				t.Errorf("a2.txt: %q", got)
			}

			// Four connections of the command above, two of this
			// one: each end of each wrote its qlog.
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
		})
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
	if r := rep.Resumption; r == nil || !r.Resumed || r.Used0RTT || r.Session != sessionResumed || r.Protocol != "h3" {
		t.Errorf("second connection: %+v", r)
	}
}
