//go:build !linux

package main

import (
	"fmt"
	"io"
	"runtime"
)

// The emulator and the experiments that run through it use Linux network
// namespaces, TUN devices, epoll and timerfd. Elsewhere the commands
// exist, so that "satquic help" lists the same set everywhere, and say why
// they cannot run.
func init() {
	for _, c := range []struct{ name, summary string }{
		{"emulate", "emulate a network profile in real time (Linux only)"},
		{"probe", "measure a link through \"satquic emulate\" (Linux only)"},
		{"bench", "run an experiment over the emulator (Linux only)"},
	} {
		name := c.name
		register(command{name: name, summary: c.summary, run: func([]string, io.Writer, io.Writer) error {
			return fmt.Errorf("needs Linux (network namespaces, TUN, epoll); this is %s/%s", runtime.GOOS, runtime.GOARCH)
		}})
	}
}
