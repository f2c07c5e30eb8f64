package memnet

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/satquic/satquic/netsim"
)

// Config configures a Network.
type Config struct {
	// Seed drives the links' randomness (see netsim.DeriveSeed).
	Seed uint64
	// ReceiveBufferBytes bounds each Conn's queue of received packets;
	// 0 means 8 MiB.
	ReceiveBufferBytes int
}

const defaultReceiveBuffer = 8 << 20

// ErrNoRoute is returned by WriteTo when no path joins the two addresses.
var ErrNoRoute = errors.New("no route to host")

// Network is a set of Conns joined by paths. All its methods are safe for
// concurrent use.
type Network struct {
	cfg   Config
	epoch time.Time

	mu        sync.Mutex
	conns     map[netip.AddrPort]*Conn
	routes    map[nodePair]*link
	links     int
	nextPort  uint16
	closed    bool
	noPort    int64
	overflows int64
}

type nodePair struct{ from, to netip.Addr }

// link is one direction of a path with its delivery timer.
type link struct {
	net     *Network
	model   *netsim.Link
	flows   []flow
	flowIdx map[flow]uint64
	timer   *time.Timer
	armed   bool
	armedAt time.Duration
}

type flow struct{ from, to netip.AddrPort }

// Path is a pair of links created by AddPath.
type Path struct {
	net    *Network
	ab, ba *link
}

// Stats returns the statistics of the A-to-B and B-to-A links.
func (p *Path) Stats() (ab, ba netsim.LinkStats) {
	p.net.mu.Lock()
	defer p.net.mu.Unlock()
	return p.ab.model.Stats(), p.ba.model.Stats()
}

// New returns an empty network whose clock starts now.
func New(cfg Config) *Network {
	if cfg.ReceiveBufferBytes <= 0 {
		cfg.ReceiveBufferBytes = defaultReceiveBuffer
	}
	return &Network{
		cfg:      cfg,
		epoch:    time.Now(), //nolint:forbidigo // the network runs in process (or bubble) time
		conns:    map[netip.AddrPort]*Conn{},
		routes:   map[nodePair]*link{},
		nextPort: 49152,
	}
}

// now is the links' time: the time since the network was created.
func (n *Network) now() time.Duration {
	return time.Since(n.epoch) //nolint:forbidigo // see New
}

// AddPath joins node addresses a and b with a link in each direction.
func (n *Network) AddPath(a, b netip.Addr, ab, ba netsim.LinkConfig) (*Path, error) {
	if !a.IsValid() || !b.IsValid() || a == b {
		return nil, fmt.Errorf("path needs two different valid addresses, got %v and %v", a, b)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, dup := n.routes[nodePair{a, b}]; dup {
		return nil, fmt.Errorf("a path between %v and %v exists already", a, b)
	}
	p := &Path{net: n}
	for dir, cfg := range []netsim.LinkConfig{ab, ba} {
		cfg.Seed = netsim.DeriveSeed(n.cfg.Seed, uint64(n.links+dir), cfg.Seed)
		model, err := netsim.NewLink(cfg)
		if err != nil {
			return nil, fmt.Errorf("path %v-%v direction %d: %w", a, b, dir, err)
		}
		l := &link{net: n, model: model, flowIdx: map[flow]uint64{}}
		if dir == 0 {
			p.ab = l
		} else {
			p.ba = l
		}
	}
	n.links += 2
	n.routes[nodePair{a, b}] = p.ab
	n.routes[nodePair{b, a}] = p.ba
	return p, nil
}

// AddProfilePath joins a client and a server with a profile's links: Up
// carries client-to-server traffic, Down server-to-client.
func (n *Network) AddProfilePath(client, server netip.Addr, p netsim.Profile) (*Path, error) {
	return n.AddPath(client, server, p.Up, p.Down)
}

// Listen binds a Conn to addr; port 0 picks a free port from 49152 up.
func (n *Network) Listen(addr netip.AddrPort) (*Conn, error) {
	if !addr.Addr().IsValid() {
		return nil, fmt.Errorf("listen: invalid address %v", addr)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, fmt.Errorf("listen %v: network closed", addr)
	}
	if addr.Port() == 0 {
		port, err := n.freePort(addr.Addr())
		if err != nil {
			return nil, err
		}
		addr = netip.AddrPortFrom(addr.Addr(), port)
	}
	if _, busy := n.conns[addr]; busy {
		return nil, fmt.Errorf("listen %v: address already in use", addr)
	}
	c := newConn(n, addr)
	n.conns[addr] = c
	return c, nil
}

func (n *Network) freePort(a netip.Addr) (uint16, error) {
	for range 1 << 14 {
		port := n.nextPort
		n.nextPort++
		if n.nextPort == 0 {
			n.nextPort = 49152
		}
		if _, busy := n.conns[netip.AddrPortFrom(a, port)]; !busy {
			return port, nil
		}
	}
	return 0, fmt.Errorf("listen %v: no free port", a)
}

// Close closes every Conn and stops the links' timers. Packets in flight
// are dropped.
func (n *Network) Close() error {
	n.mu.Lock()
	conns := make([]*Conn, 0, len(n.conns))
	for _, c := range n.conns {
		conns = append(conns, c)
	}
	n.closed = true
	for _, l := range n.routes {
		if l.timer != nil {
			l.timer.Stop()
		}
	}
	n.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return nil
}

// Dropped reports datagrams that reached an address nobody listens on, and
// datagrams dropped because a receive queue was full.
func (n *Network) Dropped() (noPort, overflow int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.noPort, n.overflows
}

// send puts a datagram on the link towards to; n.mu is held.
func (n *Network) send(from, to netip.AddrPort, data []byte) error {
	l, ok := n.routes[nodePair{from.Addr(), to.Addr()}]
	if !ok {
		return ErrNoRoute
	}
	l.model.OfferTagged(n.now(), data, l.tag(from, to))
	l.arm()
	return nil
}

func (l *link) tag(from, to netip.AddrPort) uint64 {
	f := flow{from, to}
	t, ok := l.flowIdx[f]
	if !ok {
		t = uint64(len(l.flows))
		l.flows = append(l.flows, f)
		l.flowIdx[f] = t
	}
	return t
}

// arm sets the timer for the link's next due packet, unless an earlier
// firing is already set; n.mu is held.
func (l *link) arm() {
	next, ok := l.model.Next()
	if !ok || l.net.closed || (l.armed && l.armedAt <= next) {
		return
	}
	l.armed, l.armedAt = true, next
	wait := next - l.net.now()
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.fire)
		return
	}
	l.timer.Reset(wait)
}

// fire delivers the due packets to their Conns and re-arms.
func (l *link) fire() {
	n := l.net
	n.mu.Lock()
	defer n.mu.Unlock()
	l.armed = false
	now := n.now()
	for {
		d, ok := l.model.Deliver(now)
		if !ok {
			break
		}
		f := l.flows[d.Tag]
		c, ok := n.conns[f.to]
		if !ok {
			n.noPort++
			continue
		}
		if !c.enqueue(f.from, d.Data) {
			n.overflows++
		}
	}
	l.arm()
}
