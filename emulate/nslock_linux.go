package emulate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// stateDir holds, for each namespace prefix, a lock file that a running
// emulator holds (the kernel releases it if the emulator dies) and an
// ownership marker that exists while the namespaces do. A marker found
// with the lock free means a crashed run left its namespaces behind.
const stateDir = "/run/satquic"

// prefixLock is the held lock of one namespace prefix.
type prefixLock struct {
	file   *os.File
	marker string
}

// lockPrefix takes the prefix's lock, or fails naming the process that
// holds it.
func lockPrefix(prefix string) (*prefixLock, error) {
	path := filepath.Join(stateDir, "emulate-"+prefix+".lock")
	// The holder removes the file (and the directory, when empty) when it
	// is done, so a lock won on a file that has since been unlinked is
	// worthless, and a directory may vanish under us: try again.
	for range 5 {
		if err := os.MkdirAll(stateDir, 0o755); err != nil {
			return nil, fmt.Errorf("state directory: %w", err)
		}
		f, err := openLocked(path, prefix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if sameFile(f, path) {
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return &prefixLock{file: f, marker: filepath.Join(stateDir, "emulate-"+prefix+".owned")}, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("lock file %s keeps changing; is another emulator starting and stopping?", path)
}

func openLocked(path, prefix string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("namespaces %s-* are in use by another emulator (pid %s); choose another --name", prefix, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("lock file %s: %w", path, err)
	}
	return f, nil
}

func sameFile(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// leftover reports whether a previous run's namespaces may still exist.
func (l *prefixLock) leftover() bool {
	_, err := os.Stat(l.marker)
	return err == nil
}

func (l *prefixLock) markOwned() error {
	if err := os.WriteFile(l.marker, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return fmt.Errorf("ownership marker: %w", err)
	}
	return nil
}

func (l *prefixLock) clearOwned() { _ = os.Remove(l.marker) }

// release removes the lock file, then unlocks it (see lockPrefix).
func (l *prefixLock) release() {
	_ = os.Remove(l.file.Name())
	_ = l.file.Close()
	_ = os.Remove(stateDir) // only when no other prefix still uses it
}
