package udp

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// errNoBuffer is returned by ReadBatch when no message offers room.
var errNoBuffer = errors.New("no message has a buffer to receive into")

// batcher is one way of moving batches: the Linux system-call path or the
// portable one.
type batcher interface {
	readBatch(msgs []Message) (int, error)
	pending() bool
	writeBatch(msgs []Message) (int, error)
	capabilities() Capabilities
}

// Conn reads and writes batches of datagrams on a net.PacketConn.
type Conn struct {
	pc    net.PacketConn
	opts  Options
	impl  batcher
	stats counters
}

// Listen opens a UDP socket as net.ListenPacket does ("udp", "udp4" or
// "udp6"; "udp" on a wildcard address gives a dual-stack socket) and wraps
// it in a Conn, which owns it.
func Listen(network, address string, opts Options) (*Conn, error) {
	pc, err := net.ListenPacket(network, address)
	if err != nil {
		return nil, fmt.Errorf("udp: listen %s %s: %w", network, address, err)
	}
	c, err := New(pc, opts)
	if err != nil {
		_ = pc.Close()
		return nil, err
	}
	return c, nil
}

// New wraps pc, which the Conn then owns: Close closes it. A *net.UDPConn
// gets the platform's batched path and socket options; any other
// PacketConn gets the portable path.
func New(pc net.PacketConn, opts Options) (*Conn, error) {
	if pc == nil {
		return nil, errors.New("udp: nil PacketConn")
	}
	c := &Conn{pc: pc, opts: opts}
	var caps Capabilities
	if uc, ok := pc.(*net.UDPConn); ok {
		b, udpCaps, err := openUDP(uc, opts, &c.stats)
		if err != nil {
			return nil, fmt.Errorf("udp: configure socket %v: %w", pc.LocalAddr(), err)
		}
		if b != nil {
			c.impl = b
			return c, nil
		}
		caps = udpCaps
	}
	c.impl = newPortable(pc, caps, &c.stats)
	return c, nil
}

// ReadBatch waits for at least one datagram, then fills msgs from the
// front with as many datagrams as are waiting and returns how many it
// filled. It receives into the Buf of each message that has one; a GRO
// buffer holding several datagrams is split, without copying, across the
// following messages, so those may have no Buf of their own. Datagrams
// split from a GRO buffer that do not fit in msgs are returned by the next
// call, from the same buffer, before anything new is received: until then
// the caller must not write into that Buf outside the Data it was given.
// With GRO on, a buffer shorter than GROBufferSize can cut a coalesced
// buffer short, losing the datagrams past its end; NewReadBatch gives
// buffers that cannot.
func (c *Conn) ReadBatch(msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	n, err := c.impl.readBatch(msgs)
	if err != nil {
		return n, fmt.Errorf("udp: read batch on %v: %w", c.pc.LocalAddr(), err)
	}
	return n, nil
}

// WriteBatch sends the Data of every message, waiting for room in the
// socket buffer as needed, and returns how many it sent. A message with
// the zero Addr goes to the peer of a connected socket. On error, msgs[:n]
// went out and msgs[n] is the datagram that failed (for example with
// EMSGSIZE, a PMTU probe larger than the path allows); the caller may skip
// it and send msgs[n+1:].
func (c *Conn) WriteBatch(msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	n, err := c.impl.writeBatch(msgs)
	if err != nil {
		return n, fmt.Errorf("udp: write batch on %v: %w", c.pc.LocalAddr(), err)
	}
	return n, nil
}

// NewReadBatch returns n messages laid out for this Conn's ReadBatch.
// With GRO, a quarter of them (at least one) get GROBufferSize buffers and
// the rest only carry datagrams split from those, so that a bulk flow
// needs one system call per 64 KiB while memory stays near 16 KiB per
// message. Without GRO, every message gets Options.MaxDatagramSize bytes.
func (c *Conn) NewReadBatch(n int) []Message {
	if n <= 0 {
		return nil
	}
	bufs, size := c.ReadBufferLayout(n)
	msgs := make([]Message, n)
	arena := make([]byte, bufs*size)
	for i := range bufs {
		msgs[i].Buf = arena[i*size : (i+1)*size : (i+1)*size]
	}
	return msgs
}

// ReadBufferLayout says how NewReadBatch lays out n messages: the first
// bufs of them get a Buf of size bytes, the others none. A caller that
// owns its buffers (to hand datagrams on without copying them) gives
// messages the same layout.
func (c *Conn) ReadBufferLayout(n int) (bufs, size int) {
	if n <= 0 {
		return 0, 0
	}
	if !c.impl.capabilities().GRO {
		return n, c.opts.maxDatagramSize()
	}
	return max(1, n/4), GROBufferSize
}

// Pending reports whether datagrams an earlier ReadBatch received wait in
// the callers' buffers (the rest of a GRO buffer that did not fit): the
// next ReadBatch returns them without receiving, so it writes into no Buf.
// When Pending is false, the next ReadBatch may receive into every Buf.
func (c *Conn) Pending() bool { return c.impl.pending() }

// Capabilities reports what the Conn can do, for logs and statistics.
func (c *Conn) Capabilities() Capabilities { return c.impl.capabilities() }

// Stats returns the traffic counters. It is safe to call at any time.
func (c *Conn) Stats() Stats { return c.stats.snapshot() }

// LocalAddr is the socket's local address.
func (c *Conn) LocalAddr() net.Addr { return c.pc.LocalAddr() }

// PacketConn is the wrapped connection.
func (c *Conn) PacketConn() net.PacketConn { return c.pc }

// SetReadDeadline makes a ReadBatch waiting after t fail with an error
// matching os.ErrDeadlineExceeded; the zero time waits forever.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.pc.SetReadDeadline(t) }

// SetWriteDeadline does the same for WriteBatch waiting for buffer room.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.pc.SetWriteDeadline(t) }

// Close closes the socket; a ReadBatch or WriteBatch waiting on it returns
// an error matching net.ErrClosed.
func (c *Conn) Close() error { return c.pc.Close() }
