package gateway

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel"
)

// mux is the tunnel.Session of the server's one device: it hands each
// packet from the device to the client session that owns its destination
// address, and delivers to the device what every client session
// receives. A client's trouble (its session ended, a packet it refused)
// is a dropped packet for the device, never the mux's end: the mux ends
// only when closed.
type mux struct {
	mu      sync.RWMutex
	clients map[netip.Addr]*client
	// retired holds the counters of the sessions that ended, so that
	// Stats keeps counting what they did.
	retired connectip.Stats
	// retiredConns holds the QUIC counters of the clients that left.
	retiredConns TransportStats

	in     chan *connectip.PacketBatch // packets from the clients, to the device
	mtu    int                         // the device's: longer packets are skipped
	closed chan struct{}
	// cur is the batch the device's reader takes packets from now, one
	// at a time (ReadPacket).
	curMu sync.Mutex
	cur   *connectip.PacketBatch
	once  sync.Once

	noClient  atomic.Uint64 // device packets to no client's address
	clientEnd atomic.Uint64 // device packets to a client whose session just ended
}

var _ tunnel.Session = (*mux)(nil)

// client is one tunnel client: its proxy session and the addresses it
// was given.
type client struct {
	sess  *connectip.Session
	addrs []netip.Prefix
	conn  *quic.Conn // nil when the handler runs on another server
}

// muxQueue is how many batches of packets from the clients wait for the
// device: a client's reader blocks beyond it, and the packets wait in its
// tunnel's HTTP/3 and QUIC queues, which drop when full. Each batch is
// what one client's session lent at once (connectip.Session.LendPackets,
// up to 64 packets), in the buffers its QUIC connection received them
// in: they go to the device's reader in one hand-off, one channel
// operation and one wake-up rather than one per packet, and into the
// device without a copy on the way.
const muxQueue = 64

func newMux(mtu int) *mux {
	return &mux{
		clients: make(map[netip.Addr]*client),
		in:      make(chan *connectip.PacketBatch, muxQueue),
		mtu:     mtu,
		closed:  make(chan struct{}),
	}
}

// add registers c under its addresses and forwards what its session
// receives until it ends; then c is removed and done is called.
func (m *mux) add(c *client, done func()) error {
	m.mu.Lock()
	select {
	case <-m.closed:
		m.mu.Unlock()
		return connectip.ErrClosed
	default:
	}
	for _, p := range c.addrs {
		m.clients[p.Addr()] = c
	}
	m.mu.Unlock()
	go func() {
		m.receive(c)
		m.remove(c)
		done()
	}()
	return nil
}

// receive moves c's packets into the device queue until its session
// ends: each batch holds the packet it waited for and those that had
// arrived with it. A packet longer than the device's MTU is skipped: the
// device could not take it either.
func (m *mux) receive(c *client) {
	for {
		b, err := c.sess.LendPackets()
		if err != nil {
			return
		}
		b.Packets = slices.DeleteFunc(b.Packets, func(p []byte) bool { return len(p) > m.mtu })
		if len(b.Packets) == 0 {
			b.Release()
			continue
		}
		select {
		case m.in <- b:
		case <-m.closed:
			b.Release()
			return
		}
	}
}

// remove takes c out of the table and keeps its counters.
func (m *mux) remove(c *client) {
	_ = c.sess.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range c.addrs {
		if m.clients[p.Addr()] == c {
			delete(m.clients, p.Addr())
		}
	}
	addStats(&m.retired, c.sess.Stats())
	if c.conn != nil {
		m.retiredConns.add(c.conn.Stats())
	}
}

// ReadPacket copies the next packet a client sent into b, for the
// device.
func (m *mux) ReadPacket(b []byte) (int, error) {
	m.curMu.Lock()
	defer m.curMu.Unlock()
	if m.cur == nil {
		select {
		case m.cur = <-m.in:
		case <-m.closed:
			return 0, connectip.ErrClosed
		}
	}
	return m.takeLocked(b)
}

// TryReadPacket is ReadPacket when a packet is waiting, and false at
// once otherwise.
func (m *mux) TryReadPacket(b []byte) (int, bool, error) {
	m.curMu.Lock()
	defer m.curMu.Unlock()
	if m.cur == nil {
		select {
		case m.cur = <-m.in:
		default:
			return 0, false, nil
		}
	}
	n, err := m.takeLocked(b)
	return n, true, err
}

// takeLocked copies the next packet of the current batch into b, and
// releases the batch once it is all taken; m.curMu is held.
func (m *mux) takeLocked(b []byte) (int, error) {
	p := m.cur.Packets[0]
	n := copy(b, p)
	m.cur.Packets = m.cur.Packets[1:]
	if len(m.cur.Packets) == 0 {
		m.cur.Release()
		m.cur = nil
	}
	if n < len(p) {
		return n, io.ErrShortBuffer
	}
	return n, nil
}

// LendPackets waits for the next batch of packets a client sent and lends
// it, in the buffers its connection received them in, until its Release:
// the device's writer takes them from there (tunnel.Forwarder).
func (m *mux) LendPackets() (*connectip.PacketBatch, error) {
	m.curMu.Lock()
	defer m.curMu.Unlock()
	if b := m.cur; b != nil {
		m.cur = nil
		return b, nil
	}
	select {
	case b := <-m.in:
		return b, nil
	case <-m.closed:
		return nil, connectip.ErrClosed
	}
}

// TryLendPackets is LendPackets when a batch is waiting, and nil at once
// otherwise.
func (m *mux) TryLendPackets() *connectip.PacketBatch {
	m.curMu.Lock()
	defer m.curMu.Unlock()
	if b := m.cur; b != nil {
		m.cur = nil
		return b
	}
	select {
	case b := <-m.in:
		return b
	default:
		return nil
	}
}

// WritePacket sends a packet from the device to the client that owns its
// destination. Every refusal wraps connectip.ErrDropped, so that the
// device's forwarder goes on.
func (m *mux) WritePacket(p []byte) ([]byte, error) {
	c, err := m.clientFor(p)
	if err != nil {
		return nil, err
	}
	icmp, err := c.sess.WritePacket(p)
	if err != nil && !errors.Is(err, connectip.ErrDropped) {
		m.clientEnd.Add(1)
		return nil, fmt.Errorf("%w: the tunnel of a client ended: %w", connectip.ErrDropped, err)
	}
	return icmp, err
}

// WritePackets sends a batch from the device, each run of packets for
// one client in one call (connectip.Session.WritePackets); refusals go
// to refused as WritePacket returns them.
func (m *mux) WritePackets(pkts [][]byte, refused func(i int, icmp []byte, err error)) error {
	return m.sendPackets(pkts, refused, false)
}

// GivePackets is WritePackets handing the packets' buffers to the
// clients' sessions (connectip.Session.GivePackets): on return pkts holds
// what the sessions gave back in their place, or the packets not taken.
func (m *mux) GivePackets(pkts [][]byte, refused func(i int, icmp []byte, err error)) error {
	return m.sendPackets(pkts, refused, true)
}

// sendPackets is WritePackets, or GivePackets with give.
func (m *mux) sendPackets(pkts [][]byte, refused func(i int, icmp []byte, err error), give bool) error {
	for start := 0; start < len(pkts); {
		c, err := m.clientFor(pkts[start])
		if err != nil {
			refused(start, nil, err)
			start++
			continue
		}
		end := start + 1
		for end < len(pkts) {
			next, err := m.clientFor(pkts[end])
			if err != nil || next != c {
				break
			}
			end++
		}
		base := start
		runRefused := func(i int, icmp []byte, err error) { refused(base+i, icmp, err) }
		if give {
			err = c.sess.GivePackets(pkts[start:end], runRefused)
		} else {
			err = c.sess.WritePackets(pkts[start:end], runRefused)
		}
		if err != nil {
			m.clientEnd.Add(1)
			err = fmt.Errorf("%w: the tunnel of a client ended: %w", connectip.ErrDropped, err)
			for i := start; i < end; i++ {
				refused(i, nil, err)
			}
		}
		start = end
	}
	return nil
}

// clientFor returns the client that owns p's destination, or an error
// wrapping connectip.ErrDropped.
func (m *mux) clientFor(p []byte) (*client, error) {
	h, err := connectip.ParseIPHeader(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", connectip.ErrDropped, err)
	}
	m.mu.RLock()
	c := m.clients[h.Dst]
	m.mu.RUnlock()
	if c == nil {
		m.noClient.Add(1)
		return nil, fmt.Errorf("%w: no tunnel client has address %v", connectip.ErrDropped, h.Dst)
	}
	return c, nil
}

// Close ends every client session and unblocks ReadPacket.
func (m *mux) Close() error {
	m.once.Do(func() { close(m.closed) })
	m.mu.RLock()
	live := make([]*client, 0, len(m.clients))
	for _, c := range m.clients {
		live = append(live, c)
	}
	m.mu.RUnlock()
	for _, c := range live {
		_ = c.sess.Close()
	}
	return nil
}

// Stats sums the counters of every session, ended or running.
func (m *mux) Stats() connectip.Stats {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s := m.retired
	seen := make(map[*client]bool, len(m.clients))
	for _, c := range m.clients {
		if !seen[c] {
			seen[c] = true
			addStats(&s, c.sess.Stats())
		}
	}
	return s
}

// clientCount is the number of clients connected, and the counters of
// their connections, those that left included.
func (m *mux) clientCount() (int, TransportStats) {
	m.mu.RLock()
	seen := make(map[*client]bool, len(m.clients))
	for _, c := range m.clients {
		seen[c] = true
	}
	t := m.retiredConns
	m.mu.RUnlock()
	conns := make(map[*quic.Conn]bool, len(seen))
	for c := range seen {
		if c.conn != nil && !conns[c.conn] {
			conns[c.conn] = true
			t.add(c.conn.Stats())
		}
	}
	return len(seen), t
}

// addStats adds b's counters to a's.
func addStats(a *connectip.Stats, b connectip.Stats) {
	addDirection(&a.Sent, b.Sent)
	addDirection(&a.Received, b.Received)
	a.CapsulesReceived += b.CapsulesReceived
	a.CapsulesIgnored += b.CapsulesIgnored
	a.MalformedCapsules += b.MalformedCapsules
}

func addDirection(a *connectip.DirectionStats, b connectip.DirectionStats) {
	a.Packets += b.Packets
	a.Bytes += b.Bytes
	a.Dropped.Malformed += b.Dropped.Malformed
	a.Dropped.SourceNotAllowed += b.Dropped.SourceNotAllowed
	a.Dropped.DestinationNotRouted += b.Dropped.DestinationNotRouted
	a.Dropped.HopLimit += b.Dropped.HopLimit
	a.Dropped.TooBig += b.Dropped.TooBig
	a.Dropped.UnknownContext += b.Dropped.UnknownContext
}
