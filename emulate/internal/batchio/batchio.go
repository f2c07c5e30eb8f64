//go:build linux

// Package batchio reads and writes many UDP datagrams per system call
// (recvmmsg and sendmmsg) on a *net.UDPConn, while still waiting in Go's
// network poller, so that a reader goroutine blocks without holding a thread
// and Close unblocks it.
package batchio

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Message is one datagram of a batch.
type Message struct {
	// Buf holds the datagram: on read, the buffer to fill (its length is the
	// room offered); on write, the bytes to send.
	Buf []byte
	// N is the length of the datagram read into Buf.
	N int
	// Addr is the peer: the source on read; on write, the destination, or
	// the zero value on a connected socket.
	Addr netip.AddrPort
	// Truncated reports that the datagram was longer than Buf.
	Truncated bool
}

// Conn is a UDP socket with batched I/O. Reads and writes may run
// concurrently with each other, but not with themselves. ReadBatch and
// WriteBatch wait in Go's poller; TryReadBatch never waits, for callers
// that wait on the descriptor themselves.
type Conn struct {
	udp *net.UDPConn
	raw syscall.RawConn
	rd  batch
	wr  batch
}

// New wraps c. The caller keeps ownership of c and closes it.
func New(c *net.UDPConn) (*Conn, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("raw socket: %w", err)
	}
	return &Conn{udp: c, raw: raw}, nil
}

// UDP returns the wrapped socket.
func (c *Conn) UDP() *net.UDPConn { return c.udp }

// FD returns the socket's descriptor, for a poller of the caller's own.
// It stays valid until the socket is closed.
func (c *Conn) FD() (int, error) {
	fd := -1
	if err := c.raw.Control(func(s uintptr) { fd = int(s) }); err != nil {
		return -1, err
	}
	return fd, nil
}

// TryReadBatch fills as many of msgs as there are datagrams waiting,
// without blocking, and returns how many it filled (0 when none wait).
func (c *Conn) TryReadBatch(msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	c.rd.prepare(msgs, true)
	var n int
	var opErr error
	err := c.raw.Control(func(fd uintptr) {
		n, opErr = recvmmsg(fd, c.rd.hdrs)
	})
	if err != nil {
		return 0, err
	}
	if errors.Is(opErr, syscall.EAGAIN) || errors.Is(opErr, syscall.EINTR) {
		return 0, nil
	}
	if opErr != nil {
		return 0, opErr
	}
	c.rd.finishRead(msgs[:n])
	return n, nil
}

// ReadBatch blocks until at least one datagram arrives, then fills as many
// of msgs as are ready and returns how many it filled.
func (c *Conn) ReadBatch(msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	c.rd.prepare(msgs, true)
	var n int
	var opErr error
	err := c.raw.Read(func(fd uintptr) bool {
		n, opErr = recvmmsg(fd, c.rd.hdrs)
		return !errors.Is(opErr, syscall.EAGAIN)
	})
	if err != nil {
		return 0, err
	}
	if opErr != nil {
		return 0, opErr
	}
	c.rd.finishRead(msgs[:n])
	return n, nil
}

// WriteBatch sends every message, waiting for room in the socket buffer as
// needed. It returns how many it sent; fewer than len(msgs) only with an
// error.
func (c *Conn) WriteBatch(msgs []Message) (int, error) {
	sent := 0
	for sent < len(msgs) {
		if err := c.wr.prepareWrite(msgs[sent:]); err != nil {
			return sent, err
		}
		var n int
		var opErr error
		err := c.raw.Write(func(fd uintptr) bool {
			n, opErr = sendmmsg(fd, c.wr.hdrs)
			return !errors.Is(opErr, syscall.EAGAIN)
		})
		if err != nil {
			return sent, err
		}
		if opErr != nil {
			return sent, opErr
		}
		sent += n
	}
	return sent, nil
}
