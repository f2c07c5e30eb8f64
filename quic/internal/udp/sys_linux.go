//go:build linux && !purego

package udp

import (
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// linuxConn is the batched path: recvmmsg and sendmmsg on the socket of a
// *net.UDPConn, waiting in Go's network poller so that a blocked reader
// holds no thread and Close wakes it.
type linuxConn struct {
	raw   syscall.RawConn
	v6    bool // an AF_INET6 socket, dual-stack unless IPV6_V6ONLY
	caps  Capabilities
	stats *counters

	gso    atomic.Bool            // cleared when a device refuses GSO
	gsoErr atomic.Pointer[string] // why it was cleared

	rd reader
	wr writer
}

// openUDP configures the socket of uc and returns the batched path, or no
// batcher when the portable path was asked for or the kernel lacks
// recvmmsg.
func openUDP(uc *net.UDPConn, opts Options, st *counters) (batcher, Capabilities, error) {
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, Capabilities{}, fmt.Errorf("raw socket: %w", err)
	}
	var (
		caps   Capabilities
		v6     bool
		optErr error
	)
	err = raw.Control(func(fd uintptr) {
		var family int
		family, optErr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
		if optErr != nil {
			optErr = fmt.Errorf("getsockopt SO_DOMAIN: %w", optErr)
			return
		}
		v6 = family == unix.AF_INET6
		caps = configure(int(fd), v6, opts)
	})
	if err == nil {
		err = optErr
	}
	if err != nil {
		return nil, Capabilities{}, err
	}
	if !caps.Batch {
		return nil, caps, nil
	}
	c := &linuxConn{raw: raw, v6: v6, caps: caps, stats: st}
	c.gso.Store(caps.GSO)
	c.rd.init(c)
	c.wr.init(c)
	return c, caps, nil
}

// configure sets the socket options and finds out which capabilities the
// kernel grants. Options a kernel refuses are capabilities it lacks, not
// errors: the Conn still works without them.
func configure(fd int, v6 bool, opts Options) Capabilities {
	var caps Capabilities
	if size := opts.socketBuffer(); size > 0 {
		caps.ReceiveBuffer = setBuffer(fd, unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, size)
		caps.SendBuffer = setBuffer(fd, unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, size)
	} else {
		caps.ReceiveBuffer, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
		caps.SendBuffer, _ = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF)
	}

	// RFC 9000 section 14: QUIC datagrams must not be fragmented. "Probe"
	// sets DF and ignores the kernel's path MTU cache, which QUIC's own
	// PMTU discovery (RFC 9000 section 14.3) replaces.
	// On a dual-stack socket the IPv4 options govern IPv4 peers; a
	// v6-only socket refuses them, harmlessly.
	dual := v6 && !v6Only(fd)
	ipv4 := !v6 || dual
	if v6 {
		caps.DontFragment = setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE)
		if dual {
			caps.DontFragment = setInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE) && caps.DontFragment
		}
	} else {
		caps.DontFragment = setInt(fd, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE)
	}
	if opts.Portable {
		return caps
	}

	caps.Batch = haveRecvmmsg(fd)
	if !caps.Batch {
		return caps
	}
	if !opts.DisableGSO {
		// Kernels that know UDP_SEGMENT answer a getsockopt for it.
		_, err := unix.GetsockoptInt(fd, unix.IPPROTO_UDP, unix.UDP_SEGMENT)
		caps.GSO = err == nil
	}
	if !opts.DisableGRO {
		caps.GRO = setInt(fd, unix.IPPROTO_UDP, unix.UDP_GRO, 1)
	}
	if !opts.DisableECN {
		if v6 {
			caps.ECN = setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1)
		} else {
			caps.ECN = true
		}
		if ipv4 {
			caps.ECN = setInt(fd, unix.IPPROTO_IP, unix.IP_RECVTOS, 1) && caps.ECN
		}
	}
	if opts.PacketInfo {
		if v6 {
			caps.PacketInfo = setInt(fd, unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
		} else {
			caps.PacketInfo = true
		}
		if ipv4 {
			caps.PacketInfo = setInt(fd, unix.IPPROTO_IP, unix.IP_PKTINFO, 1) && caps.PacketInfo
		}
	}
	return caps
}

func setInt(fd, level, opt, value int) bool {
	return unix.SetsockoptInt(fd, level, opt, value) == nil
}

func v6Only(fd int) bool {
	v, err := unix.GetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY)
	return err == nil && v != 0
}

// setBuffer raises a socket buffer to size, never lowering it, and
// returns what the kernel reports afterwards. The FORCE option passes
// net.core.rmem_max/wmem_max for a process with CAP_NET_ADMIN; without it
// the plain option is capped at that limit.
func setBuffer(fd, forceOpt, opt, size int) int {
	// Linux reports twice the size it was given.
	if cur, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, opt); err == nil && cur/2 >= size {
		return cur
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, forceOpt, size); err != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, opt, size)
	}
	got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, opt)
	if err != nil {
		return 0
	}
	return got
}

// haveRecvmmsg asks for zero datagrams, which any kernel with recvmmsg
// answers at once, and a sandbox that filters it refuses with ENOSYS.
func haveRecvmmsg(fd int) bool {
	var h unix.Mmsghdr
	_, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(fd), uintptr(unsafe.Pointer(&h)), 0, unix.MSG_DONTWAIT, 0, 0)
	return !errors.Is(errno, unix.ENOSYS)
}

func (c *linuxConn) capabilities() Capabilities {
	caps := c.caps
	caps.GSO = c.gso.Load()
	if reason := c.gsoErr.Load(); reason != nil {
		caps.GSOError = *reason
	}
	return caps
}

// disableGSO turns GSO off for good after a device refused it.
func (c *linuxConn) disableGSO(cause error) {
	reason := cause.Error()
	c.gsoErr.CompareAndSwap(nil, &reason)
	c.gso.Store(false)
}

func (c *linuxConn) readBatch(msgs []Message) (int, error)  { return c.rd.readBatch(msgs) }
func (c *linuxConn) pending() bool                          { return c.rd.next < len(c.rd.pending) }
func (c *linuxConn) writeBatch(msgs []Message) (int, error) { return c.wr.writeBatch(msgs) }
