//go:build !linux

package main

import (
	"fmt"
	"io"
	"runtime"
)

// The interop matrix runs through the emulator, which needs Linux; the
// command exists elsewhere so that "satquic help" lists the same set.
func init() {
	register(command{name: "interop", summary: "run the QUIC interop runner's test cases against peers (Linux only)",
		run: func([]string, io.Writer, io.Writer) error {
			return fmt.Errorf("needs Linux (the emulator); this is %s/%s", runtime.GOOS, runtime.GOARCH)
		}})
}
