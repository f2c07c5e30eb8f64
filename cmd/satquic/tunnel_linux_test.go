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
	bed := newTunnelBed(t)
	serverJSON, clientJSON := filepath.Join(bed.dir, "server.json"), filepath.Join(bed.dir, "client.json")
	server, serverOut := bed.startServer(t, "--stats", "500ms", "--json", serverJSON)
	fp := serverOut.waitFor(t, regexp.MustCompile(`certificate SHA-256: (\S+)`))[1]
	client, clientOut := bed.startClient(t, "--pin", fp, "--json", clientJSON)
	clientOut.waitFor(t, regexp.MustCompile(`interface sqtun-c \(10\.77\.0\.2/32, MTU \d+\)`))
	bed.fetch(t, "10.77.0.1", 4<<20, 7)

	for _, end := range []struct {
		cmd      *exec.Cmd
		out      *lockedBuffer
		ns, dev  string
		jsonFile string
	}{{client, clientOut, bed.nsC, "sqtun-c", clientJSON}, {server, serverOut, bed.nsS, "sqtun-s", serverJSON}} {
		terminate(t, end.cmd, end.out)
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

// tunnelBed is the satquic binary, two network namespaces joined by a
// veth pair (192.0.2.1 the server's side, 192.0.2.2 the client's) and a
// token file, all removed at the end of the test.
type tunnelBed struct {
	bin, nsS, nsC, dir, tokenFile string
}

func newTunnelBed(t *testing.T) *tunnelBed {
	t.Helper()
	testkit.RequireNamespaces(t, "the tunnel command test")
	b := &tunnelBed{dir: t.TempDir()}
	b.bin = filepath.Join(b.dir, "satquic")
	if out, err := exec.Command("go", "build", "-o", b.bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	b.nsS, b.nsC = fmt.Sprintf("sqtn-s-%d", os.Getpid()), fmt.Sprintf("sqtn-c-%d", os.Getpid())
	for _, ns := range []string{b.nsS, b.nsC} {
		mustRun(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	}
	mustRun(t, "ip", "-n", b.nsS, "link", "add", "sqv-s", "type", "veth", "peer", "name", "sqv-c", "netns", b.nsC)
	for _, c := range [][]string{
		{"-n", b.nsS, "addr", "add", "192.0.2.1/24", "dev", "sqv-s"}, {"-n", b.nsS, "link", "set", "sqv-s", "up"}, {"-n", b.nsS, "link", "set", "lo", "up"},
		{"-n", b.nsC, "addr", "add", "192.0.2.2/24", "dev", "sqv-c"}, {"-n", b.nsC, "link", "set", "sqv-c", "up"}, {"-n", b.nsC, "link", "set", "lo", "up"},
	} {
		mustRun(t, "ip", c...)
	}
	b.tokenFile = filepath.Join(b.dir, "token")
	if err := os.WriteFile(b.tokenFile, []byte("namespace-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// startServer starts "satquic tunnel server" on 192.0.2.1:4433 with the
// flags extra, and startClient "satquic tunnel client" to it; each waits
// until its interface is up.
func (b *tunnelBed) startServer(t *testing.T, extra ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	return b.startEnd(t, b.nsS, "sqtun-s", append([]string{"server", "--listen", "192.0.2.1:4433"}, extra...))
}

func (b *tunnelBed) startClient(t *testing.T, extra ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	return b.startEnd(t, b.nsC, "sqtun-c", append([]string{"client", "--server", "https://192.0.2.1:4433"}, extra...))
}

// startEnd runs "satquic tunnel" with args, the token file and the
// interface dev in the namespace ns, and waits until the interface is up.
func (b *tunnelBed) startEnd(t *testing.T, ns, dev string, args []string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd, out := startIn(t, ns, b.bin, append([]string{"tunnel"}, append(args, "--token-file", b.tokenFile, "--dev", dev)...)...)
	out.waitFor(t, regexp.MustCompile(`interface `+dev))
	return cmd, out
}

// fetch serves size bytes over HTTP on the server's tunnel address and
// fetches them over kernel TCP from the client's namespace, through the
// tunnel.
func (b *tunnelBed) fetch(t *testing.T, serverAddr string, size int, seed uint64) {
	t.Helper()
	payload := testkit.Payload(size, seed)
	hostPort := net.JoinHostPort(serverAddr, "8080")
	var ln net.Listener
	inNamespace(t, b.nsS, func() (err error) { ln, err = net.Listen("tcp", hostPort); return err })
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(payload) })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	var conn net.Conn
	inNamespace(t, b.nsC, func() (err error) { conn, err = net.DialTimeout("tcp", hostPort, 20*time.Second); return err })
	tr := &http.Transport{DialContext: func(_ context.Context, _, _ string) (net.Conn, error) { return conn, nil }}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	resp, err := hc.Get("http://" + hostPort + "/")
	if err != nil {
		t.Fatalf("GET through the tunnel: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("got %d bytes of %d through the tunnel (%v)", len(got), len(payload), err)
	}
}

// terminate stops a satquic process with SIGTERM, as an operator does,
// and fails the test unless it exits cleanly within 15 s.
func terminate(t *testing.T, cmd *exec.Cmd, out *lockedBuffer) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(cmd, 15*time.Second); err != nil {
		t.Fatalf("after SIGTERM: %v\n%s", err, out.String())
	}
}

// crash kills a satquic process, which then closes nothing: ip netns exec
// executes it in its own process, so SIGKILL reaches it.
func crash(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
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
