package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/satquic/satquic/internal/testkit"
)

// TestTunnelCommandInNamespaces runs "satquic tunnel server" and "satquic
// tunnel client" in two network namespaces joined by a veth pair, fetches
// 4 MB over kernel TCP from an HTTP server on the server's tunnel address
// through the tunnel, then stops both with SIGTERM and checks that each
// removed its TUN interface and wrote its final statistics.
func TestTunnelCommandInNamespaces(t *testing.T) {
	bin, nsS, nsC, dir, tokenFile := tunnelTestbed(t)

	serverJSON, clientJSON := filepath.Join(dir, "server.json"), filepath.Join(dir, "client.json")
	server, serverOut := startIn(t, nsS, bin, "tunnel", "server", "--listen", "192.0.2.1:4433", "--token-file", tokenFile,
		"--dev", "sqtun-s", "--stats", "500ms", "--json", serverJSON)
	fp := serverOut.waitFor(t, regexp.MustCompile(`certificate SHA-256: (\S+)`))[1]
	// The HTTP server listens on the server's end of the tunnel once the
	// interface carries that address.
	serverOut.waitFor(t, regexp.MustCompile(`interface sqtun-s`))
	payload := testkit.Payload(4<<20, 7)
	var ln net.Listener
	inNamespace(t, nsS, func() (err error) { ln, err = net.Listen("tcp", "10.77.0.1:8080"); return err })
	httpSrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(payload) })}
	go func() { _ = httpSrv.Serve(ln) }()
	defer httpSrv.Close()

	client, clientOut := startIn(t, nsC, bin, "tunnel", "client", "--server", "https://192.0.2.1:4433", "--token-file", tokenFile,
		"--pin", fp, "--dev", "sqtun-c", "--json", clientJSON)
	clientOut.waitFor(t, regexp.MustCompile(`interface sqtun-c \(10\.77\.0\.2/32, MTU \d+\)`))

	var conn net.Conn
	inNamespace(t, nsC, func() (err error) { conn, err = net.DialTimeout("tcp", "10.77.0.1:8080", 20*time.Second); return err })
	tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return conn, nil }}
	hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	resp, err := hc.Get("http://10.77.0.1:8080/")
	if err != nil {
		t.Fatalf("GET through the tunnel: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("got %d bytes of %d through the tunnel (%v)", len(got), len(payload), err)
	}
	tr.CloseIdleConnections()

	for _, end := range []struct {
		cmd      *exec.Cmd
		out      *lockedBuffer
		ns, dev  string
		jsonFile string
	}{{client, clientOut, nsC, "sqtun-c", clientJSON}, {server, serverOut, nsS, "sqtun-s", serverJSON}} {
		if err := end.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := waitExit(end.cmd, 15*time.Second); err != nil {
			t.Fatalf("%s after SIGTERM: %v\n%s", end.dev, err, end.out.String())
		}
		if exec.Command("ip", "-n", end.ns, "link", "show", end.dev).Run() == nil {
			t.Errorf("%s still exists after SIGTERM", end.dev)
		}
		var final struct {
			Tunnel struct {
				Tunneled struct{ Packets uint64 } `json:"tunneled"`
			} `json:"tunnel"`
		}
		b, err := os.ReadFile(end.jsonFile)
		if err != nil || json.Unmarshal(b, &final) != nil || final.Tunnel.Tunneled.Packets == 0 {
			t.Errorf("%s final statistics %s (%v)", end.dev, b, err)
		}
		if !regexp.MustCompile(`tunnel: out \d+ pkt`).MatchString(end.out.String()) {
			t.Errorf("%s printed no statistics:\n%s", end.dev, end.out.String())
		}
	}
	t.Logf("server:\n%s\nclient:\n%s", serverOut.String(), clientOut.String())
}

// tunnelTestbed builds the satquic binary and makes two network
// namespaces joined by a veth pair (192.0.2.1 the server's side, 192.0.2.2
// the client's) and a token file, all removed at the end of the test.
func tunnelTestbed(t *testing.T) (bin, nsS, nsC, dir, tokenFile string) {
	t.Helper()
	testkit.RequireNamespaces(t, "the tunnel command test")
	dir = t.TempDir()
	bin = filepath.Join(dir, "satquic")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	nsS, nsC = fmt.Sprintf("sqtn-s-%d", os.Getpid()), fmt.Sprintf("sqtn-c-%d", os.Getpid())
	for _, ns := range []string{nsS, nsC} {
		mustRun(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	mustRun(t, "ip", "-n", nsS, "link", "add", "sqv-s", "type", "veth", "peer", "name", "sqv-c", "netns", nsC)
	for _, c := range [][]string{
		{"-n", nsS, "addr", "add", "192.0.2.1/24", "dev", "sqv-s"}, {"-n", nsS, "link", "set", "sqv-s", "up"}, {"-n", nsS, "link", "set", "lo", "up"},
		{"-n", nsC, "addr", "add", "192.0.2.2/24", "dev", "sqv-c"}, {"-n", nsC, "link", "set", "sqv-c", "up"}, {"-n", nsC, "link", "set", "lo", "up"},
	} {
		mustRun(t, "ip", c...)
	}
	tokenFile = filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("namespace-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return bin, nsS, nsC, dir, tokenFile
}

func mustRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// startIn starts bin in the network namespace ns; the process is killed
// at the end of the test if it still runs.
func startIn(t *testing.T, ns, bin string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	out := &lockedBuffer{}
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, bin}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, out
}

// waitExit waits for cmd to exit with status 0 within d.
func waitExit(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		return fmt.Errorf("still running after %v: %w", d, <-done)
	}
}

// inNamespace runs fn on a thread that entered the named network
// namespace, so that the sockets fn makes belong to it; the thread is
// discarded after.
func inNamespace(t *testing.T, ns string, fn func() error) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		errc <- fn()
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
