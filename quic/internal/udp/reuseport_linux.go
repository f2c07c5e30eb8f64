//go:build linux

package udp

import (
	"context"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// ListenReusePort binds n UDP sockets to addr in one reuseport group, in
// order, so that socket i has index i in the group. On an error every
// socket opened so far is closed.
//
// The kernel lets any socket of the same user with SO_REUSEPORT join a
// group, a second server started on the same port too, which would shift
// the indices the steering program returns. So the address is first bound
// without SO_REUSEPORT, which fails if anyone holds it and picks the port
// if addr has port 0, and released just before the group takes it.
func ListenReusePort(network, addr string, n int) ([]*net.UDPConn, error) {
	if n < 1 {
		return nil, fmt.Errorf("udp: %d sockets", n)
	}
	probe, err := net.ListenPacket(network, addr)
	if err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	addr = probe.LocalAddr().String()
	if err := probe.Close(); err != nil {
		return nil, fmt.Errorf("udp: %w", err)
	}
	lc := net.ListenConfig{Control: setReusePort}
	conns := make([]*net.UDPConn, 0, n)
	fail := func(err error) ([]*net.UDPConn, error) {
		for _, c := range conns {
			_ = c.Close()
		}
		return nil, err
	}
	for range n {
		pc, err := lc.ListenPacket(context.Background(), network, addr)
		if err != nil {
			return fail(fmt.Errorf("udp: reuseport socket %d on %s: %w", len(conns), addr, err))
		}
		uc, ok := pc.(*net.UDPConn)
		if !ok {
			_ = pc.Close()
			return fail(fmt.Errorf("udp: %s is not a UDP network", network))
		}
		conns = append(conns, uc)
		addr = uc.LocalAddr().String()
	}
	return conns, nil
}

func setReusePort(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	})
	if err != nil {
		return err
	}
	return serr
}

// AttachSteering attaches a classic BPF program to the reuseport group of
// uc (SO_ATTACH_REUSEPORT_CBPF, Linux 4.5 and later); it then chooses the
// socket of every datagram the group receives.
func AttachSteering(uc *net.UDPConn, prog []bpf.RawInstruction) error {
	if len(prog) == 0 {
		return fmt.Errorf("udp: empty steering program")
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filter[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF, &fprog)
	})
	if err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("udp: SO_ATTACH_REUSEPORT_CBPF: %w", serr)
	}
	return nil
}
