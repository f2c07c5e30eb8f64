package netsim

import (
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Endpoint is a sans-IO protocol state machine driven by the simulator.
type Endpoint interface {
	// Receive hands the endpoint a datagram that arrived at now. The
	// endpoint owns data from then on.
	Receive(now time.Duration, from netip.AddrPort, data []byte)
	// Poll returns the datagrams ready to send at now and the time the
	// endpoint next wants to be polled (ok = false: no timer). The network
	// owns each Datagram's Data once returned; it reads the out slice only
	// during the call, so the endpoint may reuse it.
	Poll(now time.Duration) (out []Datagram, next time.Duration, ok bool)
}

// Datagram is a UDP payload and its destination.
type Datagram struct {
	To   netip.AddrPort
	Data []byte
	// ECN is the codepoint the datagram leaves with. An ECNEndpoint at
	// the far end learns the one it arrives with, after the links'
	// ECNThreshold marks and BleachECN.
	ECN ECN
}

// NetworkConfig configures a Network.
type NetworkConfig struct {
	// Seed drives every link's randomness: a run is a function of the seed,
	// the topology and the endpoints.
	Seed uint64
	// OnEvent, when set, is called for every datagram sent and received,
	// in simulation order (for traces and reproducibility checks).
	OnEvent func(Event)
	// MaxPollsAtOneTime bounds how often one endpoint may ask to be polled
	// again at the same instant without time moving; past it the run
	// stops with ErrSpin. 0 means 10000.
	MaxPollsAtOneTime int
}

// EventKind says what happened in an Event.
type EventKind uint8

// The events a Network reports.
const (
	EventSend    EventKind = iota + 1 // an endpoint handed a datagram to the network
	EventReceive                      // a datagram reached its endpoint
	EventNoRoute                      // no path joins the sender's and the destination's addresses
	EventNoPort                       // a datagram arrived for an address no endpoint is bound to
)

func (k EventKind) String() string {
	switch k {
	case EventSend:
		return "send"
	case EventReceive:
		return "recv"
	case EventNoRoute:
		return "no-route"
	case EventNoPort:
		return "no-port"
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one datagram event in a simulation trace.
type Event struct {
	At       time.Duration
	Kind     EventKind
	From, To netip.AddrPort
	Size     int
	CE       bool // the queue marked the datagram (EventReceive), ECN-capable or not
	// ECN is the codepoint the datagram was sent with (EventSend) or
	// arrived with (EventReceive).
	ECN ECN
}

func (e Event) String() string {
	return fmt.Sprintf("%v %s %v->%v %dB", e.At, e.Kind, e.From, e.To, e.Size)
}

// Errors a run may end with.
var (
	// ErrSpin: an endpoint kept asking to be polled at the current time.
	ErrSpin = errors.New("endpoint keeps asking to be polled at the same time")
	// ErrIdle: nothing is left to happen but the condition does not hold.
	ErrIdle = errors.New("network idle before the condition held")
	// ErrLimit: the time limit passed before the condition held.
	ErrLimit = errors.New("time limit reached before the condition held")
)

// NetworkStats counts datagrams across the whole network.
type NetworkStats struct {
	Events   int64 // scheduler events processed (link deliveries and timers)
	Sent     int64 // datagrams endpoints handed to the network
	Received int64 // datagrams delivered to endpoints
	NoRoute  int64 // datagrams with no path to their destination
	NoPort   int64 // datagrams that arrived where no endpoint listens
}

// Path is a pair of links joining two node addresses, one per direction.
type Path struct {
	A, B   netip.Addr
	ab, ba *Link
}

// Stats returns the statistics of the A-to-B and B-to-A links.
func (p *Path) Stats() (ab, ba LinkStats) { return p.ab.Stats(), p.ba.Stats() }

// Network is a discrete-event simulation: endpoints bound to addresses,
// joined by paths, in virtual time. It is single-threaded and deterministic.
type Network struct {
	cfg   NetworkConfig
	now   time.Duration
	seq   uint64
	queue eventHeap
	stats NetworkStats

	endpoints []*endpointState
	byAddr    map[netip.AddrPort]int32
	links     []*linkState
	routes    map[nodePair]int32 // link index for traffic from one node to another
	paths     []*Path
	flows     []flow // interned (from, to) pairs; a packet's link tag indexes it
	flowIndex map[flow]uint64
	dirty     []int32 // endpoints that received datagrams in the current step
}

type nodePair struct{ from, to netip.Addr }

type flow struct{ from, to netip.AddrPort }

type endpointState struct {
	addr            netip.AddrPort
	ep              Endpoint
	ecnEP           ECNEndpoint   // ep, when it learns codepoints
	wake            time.Duration // pending timer, valid when hasWake
	hasWake         bool
	dirty           bool
	pollsAtSameTime int           // polls in a row at pollTime
	pollTime        time.Duration // time of the last poll
	// lastTo, lastLink and lastTag cache the route of the last datagram
	// sent: most endpoints talk to one peer, and this saves two map
	// lookups per packet.
	lastTo   netip.AddrPort
	lastLink int32
	lastTag  uint64
}

type linkState struct {
	link    *Link
	armed   time.Duration // earliest pending delivery event, valid when isArmed
	isArmed bool
}

// NewNetwork returns an empty network at time 0.
func NewNetwork(cfg NetworkConfig) *Network {
	if cfg.MaxPollsAtOneTime <= 0 {
		cfg.MaxPollsAtOneTime = 10000
	}
	return &Network{
		cfg:       cfg,
		byAddr:    map[netip.AddrPort]int32{},
		routes:    map[nodePair]int32{},
		flowIndex: map[flow]uint64{},
	}
}

// Now is the current virtual time.
func (n *Network) Now() time.Duration { return n.now }

// Stats returns the network-wide counters.
func (n *Network) Stats() NetworkStats { return n.stats }

// Paths returns the paths in the order they were added.
func (n *Network) Paths() []*Path { return n.paths }

// AddPath joins node addresses a and b with a link for each direction.
// Each link's seed is derived from the network seed, the path's position and
// the link's own Seed.
func (n *Network) AddPath(a, b netip.Addr, ab, ba LinkConfig) (*Path, error) {
	if !a.IsValid() || !b.IsValid() || a == b {
		return nil, fmt.Errorf("path needs two different valid addresses, got %v and %v", a, b)
	}
	if _, dup := n.routes[nodePair{a, b}]; dup {
		return nil, fmt.Errorf("a path between %v and %v exists already", a, b)
	}
	p := &Path{A: a, B: b}
	for dir, cfg := range []LinkConfig{ab, ba} {
		cfg.Seed = DeriveSeed(n.cfg.Seed, uint64(len(n.links)), cfg.Seed)
		l, err := NewLink(cfg)
		if err != nil {
			return nil, fmt.Errorf("path %v-%v direction %d: %w", a, b, dir, err)
		}
		if dir == 0 {
			p.ab = l
		} else {
			p.ba = l
		}
	}
	n.routes[nodePair{a, b}] = n.addLink(p.ab)
	n.routes[nodePair{b, a}] = n.addLink(p.ba)
	n.paths = append(n.paths, p)
	return p, nil
}

// AddProfilePath joins a client and a server node with a profile's links:
// Up carries client-to-server traffic, Down server-to-client.
func (n *Network) AddProfilePath(client, server netip.Addr, p Profile) (*Path, error) {
	return n.AddPath(client, server, p.Up, p.Down)
}

func (n *Network) addLink(l *Link) int32 {
	n.links = append(n.links, &linkState{link: l})
	return int32(len(n.links) - 1)
}

// Attach binds an endpoint to an address and polls it at the current time,
// so that a client can start sending.
func (n *Network) Attach(addr netip.AddrPort, ep Endpoint) error {
	if !addr.IsValid() {
		return fmt.Errorf("attach: invalid address %v", addr)
	}
	if _, dup := n.byAddr[addr]; dup {
		return fmt.Errorf("attach: %v is already bound", addr)
	}
	es := &endpointState{addr: addr, ep: ep, pollTime: -1}
	es.ecnEP, _ = ep.(ECNEndpoint)
	n.endpoints = append(n.endpoints, es)
	i := int32(len(n.endpoints) - 1)
	n.byAddr[addr] = i
	n.setWake(i, n.now)
	return nil
}

// Wake asks the network to poll the endpoint at addr at the current time,
// for endpoints that got work from outside the simulation.
func (n *Network) Wake(addr netip.AddrPort) error {
	i, ok := n.byAddr[addr]
	if !ok {
		return fmt.Errorf("wake: no endpoint at %v", addr)
	}
	n.setWake(i, n.now)
	return nil
}

// DeriveSeed mixes its inputs into one seed (the splitmix64 finalizer over
// each in turn), so that neighbouring run seeds and neighbouring indices
// give unrelated streams. The simulators use it to seed each link from the
// run's seed.
func DeriveSeed(parts ...uint64) uint64 {
	var h uint64 = 0x243f6a8885a308d3
	for _, p := range parts {
		h ^= p
		h += 0x9e3779b97f4a7c15
		h = (h ^ h>>30) * 0xbf58476d1ce4e5b9
		h = (h ^ h>>27) * 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}
