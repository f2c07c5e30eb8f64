package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTunnelClientReconnectsInNamespaces stops the tunnel server under a
// running client and starts it again on the same address: the client
// reports the loss, keeps its TUN interface, reconnects, and kernel TCP
// through the same interface works again. Restarted once more with
// another pool, the server assigns another address and advertises
// another route, which the client puts on the same interface. Its final
// statistics count the reconnections.
func TestTunnelClientReconnectsInNamespaces(t *testing.T) {
	bed := newTunnelBed(t)
	server, serverOut := bed.startServer(t)
	clientJSON := filepath.Join(bed.dir, "client.json")
	// The server makes a new self-signed certificate each time it starts.
	client, clientOut := bed.startClient(t, "--insecure", "--json", clientJSON)
	clientOut.waitFor(t, regexp.MustCompile(`interface sqtun-c \(10\.77\.0\.2/32, MTU \d+\)`))
	bed.fetch(t, "10.77.0.1", 256<<10, 1)

	terminate(t, server, serverOut)
	clientOut.waitWithin(t, regexp.MustCompile(`tunnel lost: .*; reconnecting in \d`), 40*time.Second)
	if out, err := exec.Command("ip", "-n", bed.nsC, "route", "show", "dev", "sqtun-c").CombinedOutput(); err != nil || !bytes.Contains(out, []byte("10.77.0.0/24")) {
		t.Fatalf("the client's interface or its route went with the tunnel: %v\n%s", err, out)
	}

	server, serverOut = bed.startServer(t)
	clientOut.waitWithin(t, regexp.MustCompile(`reconnected after \d`), 60*time.Second)
	bed.fetch(t, "10.77.0.1", 256<<10, 2)

	terminate(t, server, serverOut)
	server, serverOut = bed.startServer(t, "--pool", "10.78.0.0/24")
	clientOut.waitWithin(t, regexp.MustCompile(`interface sqtun-c reconfigured: 10\.78\.0\.2/32, MTU \d+, routes 10\.78\.0\.0/24`), 60*time.Second)
	bed.fetch(t, "10.78.0.1", 256<<10, 3)

	terminate(t, client, clientOut)
	terminate(t, server, serverOut)
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
	bed := newTunnelBed(t)
	server, serverOut := bed.startServer(t)
	client, clientOut := bed.startClient(t, "--insecure", "--no-reconnect")
	terminate(t, server, serverOut)
	err := waitExit(client, 40*time.Second)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(clientOut.String(), "the tunnel ended") || strings.Contains(clientOut.String(), "reconnecting") {
		t.Fatalf("client with --no-reconnect after the server stopped: %v\n%s", err, clientOut.String())
	}
	if exec.Command("ip", "-n", bed.nsC, "link", "show", "sqtun-c").Run() == nil {
		t.Error("sqtun-c still exists after the client ended")
	}
}

// TestTunnelClientReconnectsAfterServerCrash kills the tunnel server
// (no CONNECTION_CLOSE, and the restarted server's stateless resets carry
// a key the client does not know): the client learns of the loss by its
// idle timeout, here 4 s, redials while the server is down, and
// reconnects once it is back.
func TestTunnelClientReconnectsAfterServerCrash(t *testing.T) {
	bed := newTunnelBed(t)
	server, _ := bed.startServer(t)
	_, clientOut := bed.startClient(t, "--insecure", "--idle-timeout", "4s", "--keep-alive", "1s", "--handshake-timeout", "2s")
	bed.fetch(t, "10.77.0.1", 256<<10, 4)

	crash(t, server)
	clientOut.waitWithin(t, regexp.MustCompile(`tunnel lost: .*; reconnecting in \d`), 30*time.Second)
	clientOut.waitWithin(t, regexp.MustCompile(`reconnecting failed: .*; next attempt in \d`), 30*time.Second)
	bed.startServer(t)
	clientOut.waitWithin(t, regexp.MustCompile(`reconnected after \d`), 60*time.Second)
	bed.fetch(t, "10.77.0.1", 256<<10, 5)
	t.Logf("client:\n%s", clientOut.String())
}

// TestTunnelClientResetAfterServerCrash: a server killed and started again
// with the same --reset-key answers the client's next packet (its
// keep-alive) with a stateless reset the client recognises: it learns
// that its tunnel is gone well before its idle timeout (30 s here), and
// reconnects.
func TestTunnelClientResetAfterServerCrash(t *testing.T) {
	bed := newTunnelBed(t)
	keyFile := filepath.Join(bed.dir, "reset.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("3c", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	server, _ := bed.startServer(t, "--reset-key", keyFile)
	_, clientOut := bed.startClient(t, "--insecure", "--keep-alive", "1s")
	bed.fetch(t, "10.77.0.1", 256<<10, 4)

	crash(t, server)
	restarted := time.Now()
	bed.startServer(t, "--reset-key", keyFile)
	clientOut.waitWithin(t, regexp.MustCompile(`tunnel lost: .*stateless reset.*; reconnecting in \d`), 15*time.Second)
	lost := time.Since(restarted)
	clientOut.waitWithin(t, regexp.MustCompile(`reconnected after \d`), 30*time.Second)
	bed.fetch(t, "10.77.0.1", 256<<10, 5)
	t.Logf("reset recognised within %v of the restart; client:\n%s", lost, clientOut.String())
}
