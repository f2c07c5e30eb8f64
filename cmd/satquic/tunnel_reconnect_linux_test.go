package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
)

// TestTunnelClientReconnectsInNamespaces stops the tunnel server under a
// running client and starts it again on the same address: the client
// reports the loss, keeps its TUN interface, reconnects, and kernel TCP
// through the same interface works again. Restarted once more with
// another pool, the server assigns another address and advertises
// another route, which the client puts on the same interface. Its final
// statistics count the reconnections.
func TestTunnelClientReconnectsInNamespaces(t *testing.T) {
	bin, nsS, nsC, dir, tokenFile := tunnelTestbed(t)
	serverArgs := []string{"tunnel", "server", "--listen", "192.0.2.1:4433", "--token-file", tokenFile, "--dev", "sqtun-s"}
	server, serverOut := startIn(t, nsS, bin, serverArgs...)
	serverOut.waitFor(t, regexp.MustCompile(`interface sqtun-s`))
	clientJSON := filepath.Join(dir, "client.json")
	// The server makes a new self-signed certificate each time it starts.
	client, clientOut := startIn(t, nsC, bin, "tunnel", "client", "--server", "https://192.0.2.1:4433", "--token-file", tokenFile,
		"--insecure", "--dev", "sqtun-c", "--json", clientJSON)
	clientOut.waitFor(t, regexp.MustCompile(`interface sqtun-c \(10\.77\.0\.2/32, MTU \d+\)`))
	fetchThroughTunnel(t, nsS, nsC, "10.77.0.1", 1)

	stopServer(t, server, serverOut)
	clientOut.waitWithin(t, regexp.MustCompile(`tunnel lost: .*; reconnecting in \d`), 40*time.Second)
	if out, err := exec.Command("ip", "-n", nsC, "route", "show", "dev", "sqtun-c").CombinedOutput(); err != nil || !bytes.Contains(out, []byte("10.77.0.0/24")) {
		t.Fatalf("the client's interface or its route went with the tunnel: %v\n%s", err, out)
	}

	server, serverOut = startIn(t, nsS, bin, serverArgs...)
	serverOut.waitFor(t, regexp.MustCompile(`interface sqtun-s`))
	clientOut.waitWithin(t, regexp.MustCompile(`reconnected after \d`), 60*time.Second)
	fetchThroughTunnel(t, nsS, nsC, "10.77.0.1", 2)

	stopServer(t, server, serverOut)
	server, serverOut = startIn(t, nsS, bin, append(serverArgs, "--pool", "10.78.0.0/24")...)
	serverOut.waitFor(t, regexp.MustCompile(`interface sqtun-s`))
	clientOut.waitWithin(t, regexp.MustCompile(`interface sqtun-c reconfigured: 10\.78\.0\.2/32, MTU \d+, routes 10\.78\.0\.0/24`), 60*time.Second)
	fetchThroughTunnel(t, nsS, nsC, "10.78.0.1", 3)

	for _, end := range []*exec.Cmd{client, server} {
		if err := end.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := waitExit(end, 15*time.Second); err != nil {
			t.Fatalf("after SIGTERM: %v\nclient:\n%s\nserver:\n%s", err, clientOut.String(), serverOut.String())
		}
	}
	var final struct {
		Reconnects  uint64  `json:"reconnects"`
		DownSeconds float64 `json:"down_seconds"`
		Tunnel      struct {
			SessionsLost uint64 `json:"sessions_lost"`
		} `json:"tunnel"`
	}
	b, err := os.ReadFile(clientJSON)
	if err != nil || json.Unmarshal(b, &final) != nil || final.Reconnects != 2 || final.Tunnel.SessionsLost != 2 || final.DownSeconds <= 0 {
		t.Errorf("client final statistics %s (%v)", b, err)
	}
	if !regexp.MustCompile(`reconnects 2, without tunnel \d`).MatchString(clientOut.String()) {
		t.Errorf("the client's statistics line does not count the reconnection:\n%s", clientOut.String())
	}
	t.Logf("client:\n%s", clientOut.String())
}

// TestTunnelClientNoReconnectExits: with --no-reconnect the client ends
// with the tunnel, and its interface goes.
func TestTunnelClientNoReconnectExits(t *testing.T) {
	bin, nsS, nsC, _, tokenFile := tunnelTestbed(t)
	server, serverOut := startIn(t, nsS, bin, "tunnel", "server", "--listen", "192.0.2.1:4433", "--token-file", tokenFile, "--dev", "sqtun-s")
	serverOut.waitFor(t, regexp.MustCompile(`interface sqtun-s`))
	client, clientOut := startIn(t, nsC, bin, "tunnel", "client", "--server", "https://192.0.2.1:4433", "--token-file", tokenFile,
		"--insecure", "--dev", "sqtun-c", "--no-reconnect")
	clientOut.waitFor(t, regexp.MustCompile(`interface sqtun-c`))
	stopServer(t, server, serverOut)
	err := waitExit(client, 40*time.Second)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(clientOut.String(), "the tunnel ended") || strings.Contains(clientOut.String(), "reconnecting") {
		t.Fatalf("client with --no-reconnect after the server stopped: %v\n%s", err, clientOut.String())
	}
	if exec.Command("ip", "-n", nsC, "link", "show", "sqtun-c").Run() == nil {
		t.Error("sqtun-c still exists after the client ended")
	}
}

// stopServer stops a tunnel server with SIGTERM, which closes its
// connections.
func stopServer(t *testing.T, server *exec.Cmd, out *lockedBuffer) {
	t.Helper()
	if err := server.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(server, 15*time.Second); err != nil {
		t.Fatalf("server after SIGTERM: %v\n%s", err, out.String())
	}
}

// fetchThroughTunnel serves 256 kB over HTTP on the server's tunnel
// address and fetches it from the client's namespace through the tunnel.
func fetchThroughTunnel(t *testing.T, nsS, nsC, serverAddr string, seed uint64) {
	t.Helper()
	payload := testkit.Payload(256<<10, seed)
	hostPort := net.JoinHostPort(serverAddr, "8080")
	var ln net.Listener
	inNamespace(t, nsS, func() (err error) { ln, err = net.Listen("tcp", hostPort); return err })
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(payload) })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	var conn net.Conn
	inNamespace(t, nsC, func() (err error) { conn, err = net.DialTimeout("tcp", hostPort, 20*time.Second); return err })
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

// waitWithin is waitFor with a deadline of d.
func (b *lockedBuffer) waitWithin(t *testing.T, re *regexp.Regexp, d time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %q in the output:\n%s", re, b.String())
	return nil
}

// TestTunnelClientReconnectsAfterServerCrash kills the tunnel server
// (no CONNECTION_CLOSE, and the restarted server's stateless resets carry
// a key the client does not know): the client learns of the loss by its
// idle timeout, here 4 s, redials while the server is down, and
// reconnects once it is back.
func TestTunnelClientReconnectsAfterServerCrash(t *testing.T) {
	bin, nsS, nsC, _, tokenFile := tunnelTestbed(t)
	serverArgs := []string{"tunnel", "server", "--listen", "192.0.2.1:4433", "--token-file", tokenFile, "--dev", "sqtun-s"}
	server, serverOut := startIn(t, nsS, bin, serverArgs...)
	serverOut.waitFor(t, regexp.MustCompile(`interface sqtun-s`))
	_, clientOut := startIn(t, nsC, bin, "tunnel", "client", "--server", "https://192.0.2.1:4433", "--token-file", tokenFile,
		"--insecure", "--dev", "sqtun-c", "--idle-timeout", "4s", "--keep-alive", "1s", "--handshake-timeout", "2s")
	clientOut.waitFor(t, regexp.MustCompile(`interface sqtun-c`))
	fetchThroughTunnel(t, nsS, nsC, "10.77.0.1", 4)

	// ip netns exec executes the server in its own process: SIGKILL
	// reaches the server itself, which closes nothing.
	if err := server.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = server.Wait()
	clientOut.waitWithin(t, regexp.MustCompile(`tunnel lost: .*; reconnecting in \d`), 30*time.Second)
	clientOut.waitWithin(t, regexp.MustCompile(`reconnecting failed: .*; next attempt in \d`), 30*time.Second)
	_, serverOut = startIn(t, nsS, bin, serverArgs...)
	serverOut.waitFor(t, regexp.MustCompile(`interface sqtun-s`))
	clientOut.waitWithin(t, regexp.MustCompile(`reconnected after \d`), 60*time.Second)
	fetchThroughTunnel(t, nsS, nsC, "10.77.0.1", 5)
	t.Logf("client:\n%s", clientOut.String())
}

// TestTunnelClientResetAfterServerCrash: a server killed and started again
// with the same --reset-key answers the client's next packet (its
// keep-alive) with a stateless reset the client recognises: it learns
// that its tunnel is gone well before its idle timeout (30 s here), and
// reconnects.
func TestTunnelClientResetAfterServerCrash(t *testing.T) {
	bin, nsS, nsC, dir, tokenFile := tunnelTestbed(t)
	keyFile := filepath.Join(dir, "reset.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("3c", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serverArgs := []string{"tunnel", "server", "--listen", "192.0.2.1:4433", "--token-file", tokenFile, "--dev", "sqtun-s", "--reset-key", keyFile}
	server, serverOut := startIn(t, nsS, bin, serverArgs...)
	serverOut.waitFor(t, regexp.MustCompile(`interface sqtun-s`))
	_, clientOut := startIn(t, nsC, bin, "tunnel", "client", "--server", "https://192.0.2.1:4433", "--token-file", tokenFile,
		"--insecure", "--dev", "sqtun-c", "--keep-alive", "1s")
	clientOut.waitFor(t, regexp.MustCompile(`interface sqtun-c`))
	fetchThroughTunnel(t, nsS, nsC, "10.77.0.1", 4)

	if err := server.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = server.Wait()
	restarted := time.Now()
	_, serverOut = startIn(t, nsS, bin, serverArgs...)
	serverOut.waitFor(t, regexp.MustCompile(`interface sqtun-s`))
	clientOut.waitWithin(t, regexp.MustCompile(`tunnel lost: .*stateless reset.*; reconnecting in \d`), 15*time.Second)
	lost := time.Since(restarted)
	clientOut.waitWithin(t, regexp.MustCompile(`reconnected after \d`), 30*time.Second)
	fetchThroughTunnel(t, nsS, nsC, "10.77.0.1", 5)
	t.Logf("reset recognised within %v of the restart; client:\n%s", lost, clientOut.String())
}
