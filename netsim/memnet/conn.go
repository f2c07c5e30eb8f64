package memnet

import (
	"net"
	"net/netip"
	"os"
	"sync"
	"time"
)

// Conn is a UDP socket on a Network. It implements net.PacketConn.
type Conn struct {
	net   *Network
	local netip.AddrPort

	mu            sync.Mutex
	queue         []received
	queueBytes    int
	closed        bool
	readDeadline  time.Time
	writeDeadline time.Time
	// wake is closed, and replaced, whenever something a blocked reader
	// waits for changes: a packet, a new deadline, Close.
	wake chan struct{}
}

type received struct {
	from netip.AddrPort
	data []byte
}

func newConn(n *Network, local netip.AddrPort) *Conn {
	return &Conn{net: n, local: local, wake: make(chan struct{})}
}

// wakeReaders must be called with c.mu held.
func (c *Conn) wakeReaders() {
	close(c.wake)
	c.wake = make(chan struct{})
}

// enqueue adds a received datagram; false when the receive buffer is full
// or the Conn closed. Called with the network's lock held.
func (c *Conn) enqueue(from netip.AddrPort, data []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.queueBytes+len(data) > c.net.cfg.ReceiveBufferBytes {
		return false
	}
	c.queue = append(c.queue, received{from, data})
	c.queueBytes += len(data)
	c.wakeReaders()
	return true
}

// ReadFromUDPAddrPort reads one datagram into p, truncating it if p is too
// short, and returns its length and sender. It blocks until a datagram
// arrives, the read deadline passes or the Conn is closed.
func (c *Conn) ReadFromUDPAddrPort(p []byte) (int, netip.AddrPort, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.closed {
			return 0, netip.AddrPort{}, c.opError("read", net.ErrClosed)
		}
		if len(c.queue) > 0 {
			r := c.queue[0]
			c.queue[0] = received{}
			c.queue = c.queue[1:]
			c.queueBytes -= len(r.data)
			return copy(p, r.data), r.from, nil
		}
		if err := c.waitLocked(c.readDeadline); err != nil {
			return 0, netip.AddrPort{}, c.opError("read", err)
		}
	}
}

// waitLocked releases c.mu until the Conn's state changes or the deadline
// passes, then takes it back.
func (c *Conn) waitLocked(deadline time.Time) error {
	var expired <-chan time.Time
	if !deadline.IsZero() {
		left := time.Until(deadline) //nolint:forbidigo // deadlines are wall (or bubble) time
		if left <= 0 {
			return os.ErrDeadlineExceeded
		}
		t := time.NewTimer(left) //nolint:forbidigo // see above
		defer t.Stop()
		expired = t.C
	}
	wake := c.wake
	c.mu.Unlock()
	defer c.mu.Lock()
	select {
	case <-wake:
	case <-expired:
	}
	return nil
}

// ReadFrom implements net.PacketConn.
func (c *Conn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, from, err := c.ReadFromUDPAddrPort(p)
	if err != nil {
		return 0, nil, err
	}
	return n, net.UDPAddrFromAddrPort(from), nil
}

// WriteToUDPAddrPort sends a copy of p to addr. It never blocks: a full
// link queue drops the packet, as a router would.
func (c *Conn) WriteToUDPAddrPort(p []byte, addr netip.AddrPort) (int, error) {
	c.mu.Lock()
	closed, deadline := c.closed, c.writeDeadline
	c.mu.Unlock()
	if closed {
		return 0, c.opError("write", net.ErrClosed)
	}
	if !deadline.IsZero() && !time.Now().Before(deadline) { //nolint:forbidigo // see waitLocked
		return 0, c.opError("write", os.ErrDeadlineExceeded)
	}
	data := append([]byte(nil), p...)
	c.net.mu.Lock()
	err := c.net.send(c.local, addr, data)
	c.net.mu.Unlock()
	if err != nil {
		return 0, c.opError("write", err)
	}
	return len(p), nil
}

// WriteTo implements net.PacketConn; addr must be a *net.UDPAddr.
func (c *Conn) WriteTo(p []byte, addr net.Addr) (int, error) {
	ua, ok := addr.(*net.UDPAddr)
	if !ok {
		return 0, c.opError("write", net.InvalidAddrError("not a UDP address: "+addr.String()))
	}
	ap := ua.AddrPort()
	// A *net.UDPAddr for an IPv4 address often holds it in 16-byte form.
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	return c.WriteToUDPAddrPort(p, ap)
}

// Close unbinds the Conn and unblocks its readers. Queued datagrams are
// dropped.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	c.queue, c.queueBytes = nil, 0
	c.wakeReaders()
	c.mu.Unlock()

	c.net.mu.Lock()
	if c.net.conns[c.local] == c {
		delete(c.net.conns, c.local)
	}
	c.net.mu.Unlock()
	return nil
}

// LocalAddr returns the bound address as a *net.UDPAddr.
func (c *Conn) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(c.local) }

// LocalAddrPort returns the bound address.
func (c *Conn) LocalAddrPort() netip.AddrPort { return c.local }

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readDeadline, c.writeDeadline = t, t
	c.wakeReaders()
	return nil
}

// SetReadDeadline sets the time after which reads fail; the zero time
// means never. It applies to reads already blocked.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readDeadline = t
	c.wakeReaders()
	return nil
}

// SetWriteDeadline sets the time after which writes fail.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeDeadline = t
	return nil
}

func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "udp", Addr: net.UDPAddrFromAddrPort(c.local), Err: err}
}
