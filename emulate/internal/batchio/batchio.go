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

	// The functions handed to the raw connection are made once, with
	// their results in these fields, so that a call allocates nothing.
	waitRead, write func(fd uintptr) bool
	control         func(fd uintptr)
	rdN, wrN        int
	rdErr, wrErr    error
}

// New wraps c. The caller keeps ownership of c and closes it.
func New(c *net.UDPConn) (*Conn, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("raw socket: %w", err)
	}
	bc := &Conn{udp: c, raw: raw}
	bc.waitRead = func(fd uintptr) bool {
		bc.rdN, bc.rdErr = recvmmsg(fd, bc.rd.hdrs)
		return !errors.Is(bc.rdErr, syscall.EAGAIN)
	}
	bc.control = func(fd uintptr) { bc.rdN, bc.rdErr = recvmmsg(fd, bc.rd.hdrs) }
	bc.write = func(fd uintptr) bool {
		bc.wrN, bc.wrErr = sendmmsg(fd, bc.wr.hdrs)
		return !errors.Is(bc.wrErr, syscall.EAGAIN)
	}
	return bc, nil
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
	if err := c.raw.Control(c.control); err != nil {
		return 0, err
	}
	if errors.Is(c.rdErr, syscall.EAGAIN) || errors.Is(c.rdErr, syscall.EINTR) {
		return 0, nil
	}
	if c.rdErr != nil {
		return 0, c.rdErr
	}
	c.rd.finishRead(msgs[:c.rdN])
	return c.rdN, nil
}

// ReadBatch blocks until at least one datagram arrives, then fills as many
// of msgs as are ready and returns how many it filled.
func (c *Conn) ReadBatch(msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	c.rd.prepare(msgs, true)
	if err := c.raw.Read(c.waitRead); err != nil {
		return 0, err
	}
	if c.rdErr != nil {
		return 0, c.rdErr
	}
	c.rd.finishRead(msgs[:c.rdN])
	return c.rdN, nil
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
		if err := c.raw.Write(c.write); err != nil {
			return sent, err
		}
		if c.wrErr != nil {
			return sent, c.wrErr
		}
		sent += c.wrN
	}
	return sent, nil
}
