package bench

import (
	"net/netip"
	"os/exec"
)

// loopbackEnv runs both ends on the host's loopback: the stacks' own
// logic, without the emulator.
func loopbackEnv() Env {
	h := Host{
		Addr:    netip.MustParseAddr("127.0.0.1"),
		Do:      func(fn func() error) error { return fn() },
		Command: exec.Command,
	}
	return Env{Server: h, Client: h}
}
