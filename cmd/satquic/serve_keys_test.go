package main

import (
	"bytes"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeKeyFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadKeyFile(t *testing.T) {
	good := strings.Repeat("0f", 32)
	key := make([]byte, 32)
	if ok, err := readKeyFile("reset-key", writeKeyFile(t, "\n "+good+"\n"), key); !ok || err != nil || key[0] != 0x0f || key[31] != 0x0f {
		t.Fatalf("good file: %v %v %x", ok, err, key)
	}
	if ok, err := readKeyFile("reset-key", "", key); ok || err != nil {
		t.Errorf("no file: %v %v, want nothing read", ok, err)
	}
	for _, bad := range []string{good[:62], good + "00", strings.Repeat("zz", 32), ""} {
		_, err := readKeyFile("token-key", writeKeyFile(t, bad), key)
		if err == nil || !strings.Contains(err.Error(), "--token-key") || !strings.Contains(err.Error(), "64 hex digits") {
			t.Errorf("%q: %v, want an error naming the flag and the format", bad, err)
		}
	}
	if _, err := readKeyFile("token-key", filepath.Join(t.TempDir(), "missing"), key); err == nil || !strings.Contains(err.Error(), "--token-key") {
		t.Errorf("missing file: %v", err)
	}
}

func TestServeKeyFlagsBad(t *testing.T) {
	dir := t.TempDir()
	bad := writeKeyFile(t, "not hex")
	for _, args := range [][]string{
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--reset-key", bad},
		{"serve", "--dir", dir, "--addr", "127.0.0.1:0", "--token-key", bad},
		{"tunnel", "server", "--token", "t", "--listen", "127.0.0.1:0", "--reset-key", bad},
		{"tunnel", "server", "--token", "t", "--listen", "127.0.0.1:0", "--token-key", filepath.Join(dir, "missing")},
	} {
		var stdout, stderr bytes.Buffer
		if code := runMain(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "-key") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and the flag named", args, code, stderr.String())
		}
	}
}

// resetToken sends addr a short-header packet for a connection it does
// not know and returns the stateless reset token of its answer (RFC 9000
// section 10.3: the last 16 bytes).
func resetToken(t *testing.T, addr string) []byte {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := make([]byte, 1200)
	p[0] = 0x40 | 0x01
	copy(p[1:9], "unknown!")
	buf := make([]byte, 1500)
	for range 20 { // a server may space its resets out
		if _, err := c.Write(p); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
		n, err := c.Read(buf)
		if err == nil && n >= 21 && buf[0]&0xc0 == 0x40 {
			return append([]byte(nil), buf[n-16:n]...)
		}
	}
	t.Fatalf("no stateless reset from %s", addr)
	return nil
}

// TestServeResetKeyFile: two runs of serve with the same --reset-key
// reset a connection ID with the same token, so that a restarted server
// resets the connections of its last run; without the flag each run
// draws its own key.
func TestServeResetKeyFile(t *testing.T) {
	dir := t.TempDir()
	key := writeKeyFile(t, strings.Repeat("5a", 32))
	tokens := make([][]byte, 3)
	for i, extra := range [][]string{{"--reset-key", key}, {"--reset-key", key}, nil} {
		h := startServeHandle(t, dir, extra...)
		tokens[i] = resetToken(t, h.addr)
		if err := h.stop(t); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(tokens[0], tokens[1]) {
		t.Errorf("the same key gave tokens %x and %x", tokens[0], tokens[1])
	}
	if bytes.Equal(tokens[0], tokens[2]) {
		t.Errorf("a run without --reset-key gave the key file's token %x", tokens[2])
	}
}

// FuzzReadKeyFile: whatever a key file holds, reading it gives the key its
// 64 hex digits spell, or an error naming the flag; never a panic.
func FuzzReadKeyFile(f *testing.F) {
	f.Add([]byte(strings.Repeat("ab", 32) + "\n"))
	f.Add([]byte(strings.Repeat("ab", 40)))
	f.Add([]byte("  " + strings.Repeat("0", 63) + "g"))
	f.Add([]byte{})
	path := filepath.Join(f.TempDir(), "key")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		key := make([]byte, 32)
		ok, err := readKeyFile("reset-key", path, key)
		if err != nil {
			if ok || !strings.Contains(err.Error(), "--reset-key") {
				t.Fatalf("ok %v with error %v", ok, err)
			}
			return
		}
		want, derr := hex.DecodeString(strings.TrimSpace(string(data)))
		if !ok || derr != nil || !bytes.Equal(key, want) {
			t.Fatalf("read %x from %q, want %x (%v)", key, data, want, derr)
		}
	})
}
