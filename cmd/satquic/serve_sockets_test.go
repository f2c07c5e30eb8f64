package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestServeSockets serves from two sockets with QUIC-LB connection IDs:
// downloads work, the server says it steers, and at the end no socket
// received a datagram of another's connection.
func TestServeSockets(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("socket groups are steered on Linux only")
	}
	dir := t.TempDir()
	body := bytes.Repeat([]byte("sockets "), 4096)
	serveMust(t, os.WriteFile(filepath.Join(dir, "f"), body, 0o644))
	h := startServeHandle(t, dir, "--sockets", "2", "--lb-server-id", "c0ffee", "--lb-config-id", "3", "--debug-addr", "127.0.0.1:0")
	dm := h.stdout.waitFor(t, regexp.MustCompile(`debug endpoints on http://(127\.0\.0\.1:\d+)/`))
	for range 6 {
		out := filepath.Join(t.TempDir(), "f")
		if _, _, err := runGetCmd(t, "https://"+h.addr+"/f", "-o", out, "--pin", h.fp); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, body) {
			t.Fatalf("downloaded %d bytes, want %d (%v)", len(got), len(body), err)
		}
	}
	resp, err := http.Get("http://" + dm[1] + "/debug/vars")
	if err != nil {
		t.Fatal(err)
	}
	var st debugState
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || len(st.Sockets) != 2 || st.Sockets[0].Connections+st.Sockets[1].Connections != 6 {
		t.Errorf("/debug/vars sockets %+v (%v)", st.Sockets, err)
	}
	if err := h.stop(t); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.stderr.String(), "serve: 2 sockets, steered by connection ID") {
		t.Errorf("no steering line on stderr:\n%s", h.stderr.String())
	}
	re := regexp.MustCompile(`(\d+): (\d+) connections, \d+ datagrams, (\d+) for another socket's connections`)
	m := re.FindAllStringSubmatch(h.stdout.String(), -1)
	if len(m) != 2 {
		t.Fatalf("no line per socket in:\n%s", h.stdout.String())
	}
	conns := 0
	for _, s := range m {
		if s[3] != "0" {
			t.Errorf("socket %s received %s datagrams of the other's connections", s[1], s[3])
		}
		n, _ := strconv.Atoi(s[2])
		conns += n
	}
	if conns != 6 {
		t.Errorf("%d connections counted over the sockets, want the 6 downloads'", conns)
	}
}

func TestServeSocketsBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--sockets", "-1"},
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--sockets", "256"},
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--lb-server-id", "xyz"},
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--lb-server-id", strings.Repeat("00", 16)},
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--lb-server-id", "01", "--lb-config-id", "7"},
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--lb-config-id", "1"},
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--lb-server-id", "01", "--lb-nonce-len", "2"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runMain(args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", args, code, stderr.String())
		}
	}
}
