//go:build linux

package emulate

import (
	"os"
	"runtime"
	"testing"
)

// TestMain gives the emulator's high-priority threads spare Ps, as the satquic
// command does: a thread woken by its timer needs a P to run Go code, and
// with GOMAXPROCS at the core count the Ps may all be held by ordinary
// threads the kernel has descheduled.
func TestMain(m *testing.M) {
	runtime.GOMAXPROCS(max(16, runtime.NumCPU()))
	os.Exit(m.Run())
}
