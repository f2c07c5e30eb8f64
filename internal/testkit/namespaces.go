package testkit

import (
	"os"
	"os/exec"
	"testing"
)

// RequireNamespaces skips t unless the emulator's namespace mode can run
// here: root, iproute2's ip command and /dev/net/tun. The message says which
// is missing and what needed it (why, e.g. "the download experiment").
func RequireNamespaces(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("%s runs through network namespaces, which need root; skipping", why)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("%s needs iproute2's ip command, which is not installed; skipping", why)
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("%s needs TUN, which is not available (%v); skipping", why, err)
	}
}
