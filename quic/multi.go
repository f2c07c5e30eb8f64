package quic

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/satquic/satquic/quic/internal/udp"
)

// MaxSockets bounds the sockets of one Transport: the socket index is
// written into one octet of the connection IDs.
const MaxSockets = 255

// socket is one of a Transport's sockets, with its reading goroutine. A
// connection belongs to one socket: the one its first datagram arrived on
// (a server connection) or the first (a client connection). It sends on
// it, and the connection IDs it issues name it, so that the steering
// program of the socket group brings the peer's datagrams back to it.
type socket struct {
	index int
	io    *udp.Conn
	// writeMu serializes WriteBatch, which must not overlap: connection
	// goroutines send on the socket they belong to.
	writeMu sync.Mutex
	stats   socketCounters
}

// socketCounters are what SocketStats reports; the socket's reader alone
// adds to them.
type socketCounters struct {
	datagrams   atomic.Uint64
	foreign     atomic.Uint64
	connections atomic.Uint64
}

// SocketStats counts what one socket of a Transport received.
type SocketStats struct {
	// Datagrams is how many datagrams arrived on the socket.
	Datagrams uint64
	// Foreign counts the datagrams for a connection that belongs to
	// another socket of the Transport. The Transport still delivers them,
	// from one routing table, but a steered socket group receives none:
	// the kernel took each to its owner.
	Foreign uint64
	// Connections is how many server connections started on the socket
	// and belong to it.
	Connections uint64
}

// ListenMulti opens a Transport on n UDP sockets bound to addr with
// SO_REUSEPORT, each read by a goroutine of its own, so that a server
// spreads the work of receiving over n cores. When the Transport starts
// (its first Listen or Dial) it attaches a classic BPF program to the
// group that hands every datagram to the socket its connection belongs to,
// read from the Destination Connection ID (see udp.SteeringProgram): the
// connection IDs the Transport issues carry their socket's index in one
// octet, the first, or with LoadBalancer set the first of the QUIC-LB
// nonce. A client's first Initials and 0-RTT packets, whose connection ID
// the client chose, go by the same octet of that ID, which is random but
// the same in all of them: the connection belongs to the socket they
// reach, and connections spread over the sockets even when they all come
// from one client port.
//
// Where the program cannot be attached (not Linux, a kernel older than
// 4.5), the Transport serves from its first socket alone, closes the
// others, and SocketFallback says why; n of 1 opens an ordinary socket.
// Set the Transport's exported fields, other than Conn, before the first
// Listen or Dial. Closing the Transport closes its sockets.
func ListenMulti(addr string, n int) (*Transport, error) {
	if n < 1 || n > MaxSockets {
		return nil, fmt.Errorf("quic: %d sockets, not in [1, %d]", n, MaxSockets)
	}
	if n == 1 {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, fmt.Errorf("quic: %w", err)
		}
		return &Transport{Conn: pc, ownsConn: true}, nil
	}
	conns, err := udp.ListenReusePort("udp", addr, n)
	if err != nil {
		// No reuseport group here: one socket, and the reason kept.
		pc, err2 := net.ListenPacket("udp", addr)
		if err2 != nil {
			return nil, fmt.Errorf("quic: %w", err2)
		}
		return &Transport{Conn: pc, ownsConn: true, fallback: err}, nil
	}
	return &Transport{Conn: conns[0], ownsConn: true, groupConns: conns[1:]}, nil
}

// openSockets makes the Transport's sockets at its start: the first on
// Conn, the rest on the other members of its reuseport group once the
// steering program is attached. A group that cannot be steered is closed
// but for its first socket.
func (t *Transport) openSockets(opts udp.Options) error {
	first, err := udp.New(t.Conn, opts)
	if err != nil {
		return err
	}
	t.socks = []*socket{{index: 0, io: first}}
	if len(t.groupConns) == 0 {
		return nil
	}
	if err := t.attachSteering(); err != nil {
		t.dropGroup(err)
		return nil
	}
	for i, pc := range t.groupConns {
		io, err := udp.New(pc, opts)
		if err != nil {
			t.socks = t.socks[:1]
			t.dropGroup(err)
			return nil
		}
		t.socks = append(t.socks, &socket{index: i + 1, io: io})
	}
	return nil
}

// attachSteering attaches the group's steering program for the connection
// IDs the Transport issues.
func (t *Transport) attachSteering() error {
	uc, ok := t.Conn.(*net.UDPConn)
	if !ok {
		return errors.New("quic: the first socket of a group is not a *net.UDPConn")
	}
	prog, err := udp.SteeringProgram(udp.Steering{
		Sockets:      1 + len(t.groupConns),
		IDLen:        t.cidLen,
		SocketOffset: t.cids.offset,
	})
	if err != nil {
		return err
	}
	return attachSteering(uc, prog)
}

// attachSteering is udp.AttachSteering; the tests of the fallback make it
// fail as an old kernel does.
var attachSteering = udp.AttachSteering

// dropGroup closes every socket of the group but the first, which serves
// alone, and keeps the reason for SocketFallback.
func (t *Transport) dropGroup(reason error) {
	for _, pc := range t.groupConns {
		_ = pc.Close()
	}
	t.groupConns = nil
	t.fallback = reason
	t.cids.sockets = 1
}

// Sockets is how many sockets the Transport reads: 1 unless ListenMulti
// opened a group that could be steered. It is 0 until the Transport has
// started (the first Listen or Dial).
func (t *Transport) Sockets() int {
	if t.io == nil {
		return 0
	}
	return len(t.socks)
}

// SocketFallback reports why a Transport from ListenMulti serves from one
// socket rather than the group asked for (no SO_REUSEPORT, no BPF
// steering), or nil. It is known once the Transport has started; a
// server logs it after Listen.
func (t *Transport) SocketFallback() error {
	if t.io == nil {
		return nil
	}
	return t.fallback
}

// SocketStats returns the counters of each of the Transport's sockets, in
// the order of their indices; nil before the Transport has started.
func (t *Transport) SocketStats() []SocketStats {
	if t.io == nil {
		return nil
	}
	out := make([]SocketStats, len(t.socks))
	for i, s := range t.socks {
		out[i] = SocketStats{
			Datagrams:   s.stats.datagrams.Load(),
			Foreign:     s.stats.foreign.Load(),
			Connections: s.stats.connections.Load(),
		}
	}
	return out
}

// countDatagram counts a datagram that arrived on s for c (nil: no
// connection).
func (s *socket) countDatagram(c *Conn) {
	s.stats.datagrams.Add(1)
	if c != nil && c.sock != s {
		s.stats.foreign.Add(1)
	}
}

// closeUnstarted closes the sockets of a Transport from ListenMulti that
// failed to start: nothing else would.
func (t *Transport) closeUnstarted() {
	if !t.ownsConn || t.io != nil {
		return
	}
	_ = t.Conn.Close()
	for _, pc := range t.groupConns {
		_ = pc.Close()
	}
}
