package tunnelbench

import (
	"os"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// innerControl sets the congestion control cc (TCP_CONGESTION) on the
// inner TCP's sockets before they listen or connect; an accepted
// connection takes its listener's. Empty cc leaves the kernel's default
// (DefaultTCPCongestionControl), and innerControl returns nil.
func innerControl(cc string) socketControl {
	if cc == "" {
		return nil
	}
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc)
		}); err != nil {
			return err
		}
		return serr
	}
}

// AvailableTCPCongestionControls lists the congestion controls the kernel
// has loaded ("" where it cannot be read).
func AvailableTCPCongestionControls() string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// TCPCongestionAvailable reports whether the kernel has cc loaded.
func TCPCongestionAvailable(cc string) bool {
	return slices.Contains(strings.Fields(AvailableTCPCongestionControls()), cc)
}
