//go:build !linux

package udp

import (
	"errors"
	"net"

	"golang.org/x/net/bpf"
)

// errNoSteering: only Linux steers a reuseport group with a BPF program.
var errNoSteering = errors.New("udp: steering a reuseport group needs Linux (SO_ATTACH_REUSEPORT_CBPF)")

// ListenReusePort is Linux only; elsewhere it fails, and a server serves
// from one socket.
func ListenReusePort(_, _ string, _ int) ([]*net.UDPConn, error) {
	return nil, errNoSteering
}

// AttachSteering is Linux only.
func AttachSteering(_ *net.UDPConn, _ []bpf.RawInstruction) error {
	return errNoSteering
}
