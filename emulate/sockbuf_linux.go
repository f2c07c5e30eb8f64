package emulate

import (
	"net"

	"golang.org/x/sys/unix"
)

// growBuffers asks for socketBuffer bytes of receive and send buffer. The
// plain options are capped by net.core.rmem_max and wmem_max; as root the
// FORCE variants go past the cap, and their failure without privileges is
// harmless.
func growBuffers(c *net.UDPConn) {
	_ = c.SetReadBuffer(socketBuffer)
	_ = c.SetWriteBuffer(socketBuffer)
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, socketBuffer)
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, socketBuffer)
	})
}
