//go:build unix

package hq

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpenServedRefusesAFIFOAtOnce: a FIFO in the served directory, which
// no writer opens, is refused without blocking; before, each request for
// it held an OS thread until the process ran out of them.
func TestOpenServedRefusesAFIFOAtOnce(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644))
	must(t, os.Symlink("fifo", filepath.Join(dir, "link-to-fifo")))
	root, err := os.OpenRoot(dir)
	must(t, err)
	defer root.Close()
	s := &Server{Root: root}
	for _, name := range []string{"/fifo", "/link-to-fifo"} {
		done := make(chan error, 1)
		go func() {
			f, err := s.open(name)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotServed) {
				t.Errorf("%s: %v, want ErrNotServed", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: opening a FIFO blocks", name)
		}
	}
	f, fi, err := OpenServed(root, "/file", false)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("a regular file: %v, %v", fi, err)
	}
	f.Close()
	if _, _, err := OpenServed(root, "/", false); !errors.Is(err, ErrNotServed) {
		t.Errorf("the root without dirs: %v", err)
	}
	if f, _, err := OpenServed(root, "/", true); err != nil {
		t.Errorf("the root with dirs: %v", err)
	} else {
		f.Close()
	}
}
