//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeRefusesFIFOsAndHidesWhatItRefuses: a FIFO in the served
// directory is "not found" at once in both protocols (it crashed the
// server over hq-interop once enough requests had each blocked a thread on
// it), and the HTTP/3 listing shows neither it nor a symbolic link that
// leaves the directory, since both would be refused.
func TestServeRefusesFIFOsAndHidesWhatItRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	serveMust(t, os.WriteFile(filepath.Join(dir, "file.txt"), []byte("x"), 0o644))
	serveMust(t, os.Symlink("file.txt", filepath.Join(dir, "inside-link")))
	serveMust(t, os.Symlink("/etc/hostname", filepath.Join(dir, "escape")))
	addr, fp := startServe(t, dir)
	base := "https://" + addr
	for _, alpn := range []string{"h3", "hq-interop"} {
		for i := range 20 {
			start := time.Now()
			_, _, err := runGetCmd(t, base+"/fifo", "--pin", fp, "--alpn", alpn, "--timeout", "10s")
			if err == nil || !(strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), "not found")) {
				t.Fatalf("%s: GET /fifo #%d: %v, want not found", alpn, i, err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("%s: GET /fifo #%d took %v", alpn, i, d)
			}
		}
	}
	listing, _, err := runGetCmd(t, base+"/", "--pin", fp, "--alpn", "h3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"file.txt", "inside-link"} {
		if !strings.Contains(listing, want) {
			t.Errorf("the listing lacks %s:\n%s", want, listing)
		}
	}
	for _, hidden := range []string{"fifo", "escape"} {
		if strings.Contains(listing, hidden) {
			t.Errorf("the listing shows %s, which the server refuses:\n%s", hidden, listing)
		}
	}
}
