//go:build linux

package emulate

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/emulate/internal/batchio"
	"github.com/satquic/satquic/emulate/internal/rtio"
	"github.com/satquic/satquic/netsim"
)

// RelayConfig configures a UDP relay.
type RelayConfig struct {
	// Listen is the local address clients send to, e.g. "127.0.0.1:4433";
	// port 0 picks a free port (see Relay.Addr).
	Listen string
	// Upstream is the server every client's datagrams are forwarded to.
	Upstream string
	// Up carries client-to-server datagrams, Down the replies.
	Up, Down netsim.LinkConfig
	// IdleTimeout expires a flow (and its upstream socket) that has seen no
	// datagram either way for this long; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxFlows bounds the client flows open at once; 0 means
	// DefaultMaxFlows. Datagrams from further clients are dropped.
	MaxFlows int
	// Pcap, when set, is the prefix of two capture files, Pcap-up.pcap and
	// Pcap-down.pcap, holding what each direction delivered.
	Pcap string
}

// Defaults for RelayConfig.
const (
	DefaultIdleTimeout = 2 * time.Minute
	DefaultMaxFlows    = 1024
)

const (
	readBatch = 32
	// socketBuffer is large enough to hold tens of milliseconds at
	// hundreds of Mbit/s while a reader is descheduled.
	socketBuffer = 8 << 20
)

// Relay is a running UDP relay. Its methods are safe for concurrent use.
type Relay struct {
	cfg      RelayConfig
	clk      rtio.Clock
	listen   *batchio.Conn
	upstream *net.UDPAddr
	overhead int // trailer size: the IP and UDP header bytes of a datagram
	up, down *direction
	caps     *captures
	pool     bufferPool
	flows    flowTable
	// The ingress threads wait on these: the listening socket for the
	// uplink, every flow's upstream socket for the downlink.
	upIn, downIn *rtio.Poller

	wg      sync.WaitGroup
	closing atomic.Bool
	stop    chan struct{}
	once    sync.Once
	err     error
}

// StartRelay opens the listening socket and starts relaying. Every error
// it returns is about the configuration or the environment (bad address,
// port in use, invalid link parameters); nothing is left open after one.
func StartRelay(cfg RelayConfig) (*Relay, error) {
	r, err := newRelay(cfg)
	if err != nil {
		return nil, err
	}
	if err := r.startIngress(); err != nil {
		r.listen.UDP().Close()
		return nil, err
	}
	if err := r.startDirections(); err != nil {
		r.upIn.Close()
		r.downIn.Close()
		r.listen.UDP().Close()
		return nil, err
	}
	// The ingress threads report their priority before Start returns, so
	// that Stats().HighPriority is settled from the start.
	started := make(chan struct{}, 2)
	r.wg.Add(3)
	go r.readClients(started)
	go r.readFlows(started)
	go r.expireFlows()
	<-started
	<-started
	return r, nil
}

func (r *Relay) startIngress() error {
	fd, err := r.listen.FD()
	if err != nil {
		return err
	}
	if r.upIn, err = rtio.NewPoller(); err != nil {
		return err
	}
	if err := r.upIn.Add(fd, 0); err != nil {
		r.upIn.Close()
		return err
	}
	if r.downIn, err = rtio.NewPoller(); err != nil {
		r.upIn.Close()
		return err
	}
	return nil
}

func newRelay(cfg RelayConfig) (*Relay, error) {
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxFlows == 0 {
		cfg.MaxFlows = DefaultMaxFlows
	}
	if cfg.IdleTimeout < 0 || cfg.MaxFlows < 0 {
		return nil, fmt.Errorf("idle timeout %v and max flows %d must not be negative", cfg.IdleTimeout, cfg.MaxFlows)
	}
	for _, c := range []struct {
		name string
		cfg  netsim.LinkConfig
	}{{"uplink", cfg.Up}, {"downlink", cfg.Down}} {
		if err := c.cfg.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	up, err := net.ResolveUDPAddr("udp", cfg.Upstream)
	if err != nil {
		return nil, fmt.Errorf("upstream: %w", err)
	}
	if up.Port == 0 || up.IP.IsUnspecified() || up.IP == nil {
		return nil, fmt.Errorf("upstream %q needs a host and a port", cfg.Upstream)
	}
	clk, err := rtio.NewClock()
	if err != nil {
		return nil, err
	}
	listen, err := listenUDP(cfg.Listen)
	if err != nil {
		return nil, err
	}
	if la := listen.UDP().LocalAddr().(*net.UDPAddr); la.Port == up.Port && (la.IP.Equal(up.IP) || la.IP.IsUnspecified() && up.IP.IsLoopback()) {
		listen.UDP().Close()
		return nil, fmt.Errorf("upstream %v is the relay's own address", up)
	}
	return &Relay{
		cfg: cfg, clk: clk, listen: listen, upstream: up,
		overhead: udpOverhead(up.IP.To4() == nil),
		flows:    newFlowTable(),
		stop:     make(chan struct{}),
	}, nil
}

func listenUDP(addr string) (*batchio.Conn, error) {
	la, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen address: %w", err)
	}
	c, err := net.ListenUDP("udp", la)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return wrapUDP(c)
}

// wrapUDP enlarges the socket's buffers and wraps it for batched I/O.
func wrapUDP(c *net.UDPConn) (*batchio.Conn, error) {
	growBuffers(c)
	bc, err := batchio.New(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	return bc, nil
}

func (r *Relay) startDirections() error {
	var err error
	if r.caps, err = openCaptures(r.cfg.Pcap); err != nil {
		return err
	}
	upOut := &relayOut{r: r, pcap: r.caps.up}
	if r.up, err = newDirection("uplink", r.clk, r.cfg.Up, upSink{upOut}); err != nil {
		r.caps.discard()
		return err
	}
	downOut := &relayOut{r: r, pcap: r.caps.down}
	if r.down, err = newDirection("downlink", r.clk, r.cfg.Down, downSink{downOut}); err != nil {
		r.up.close()
		r.caps.discard()
		return err
	}
	// The sinks run only once packets are offered, after this returns.
	upOut.dir, downOut.dir = r.up, r.down
	return nil
}

// Addr is the address the relay listens on.
func (r *Relay) Addr() netip.AddrPort {
	return r.listen.UDP().LocalAddr().(*net.UDPAddr).AddrPort()
}

// Stats returns a snapshot of the relay's counters.
func (r *Relay) Stats() Stats {
	return Stats{
		Mode:         "relay",
		ElapsedS:     r.clk.Now().Seconds(),
		Flows:        r.flows.count(),
		HighPriority: highPriority(r.up, r.down),
		Up:           r.up.snapshot(),
		Down:         r.down.snapshot(),
	}
}

// Close stops the relay: packets still on the link are dropped, every
// socket is closed and the captures are flushed.
func (r *Relay) Close() error {
	r.once.Do(func() {
		r.closing.Store(true)
		close(r.stop)
		r.up.close()
		r.down.close()
		r.upIn.Stop()
		r.downIn.Stop()
		r.wg.Wait()
		r.listen.UDP().Close()
		for _, f := range r.flows.removeAll() {
			f.close(r.downIn)
		}
		r.upIn.Close()
		r.downIn.Close()
		r.err = r.caps.close()
	})
	return r.err
}

// stamp copies a datagram into a pooled buffer and appends its trailer.
func (r *Relay) stamp(payload []byte, flow uint32, now time.Duration) []byte {
	b := r.pool.get(len(payload) + r.overhead)
	b = append(b, payload...)
	return appendTrailer(b, r.overhead, trailer{flow: flow, arrival: now})
}

// readClients is the uplink's ingress: a high-priority thread that reads
// datagrams from clients and assigns each to its flow (opened on first
// sight).
func (r *Relay) readClients(started chan<- struct{}) {
	defer r.wg.Done()
	r.up.stats.threadStarted(rtio.LockThread(rtio.Realtime))
	started <- struct{}{}
	msgs := newReadBuffers(readBatch, readSize(r.cfg.Up.MTU, r.overhead))
	pkts := make([][]byte, 0, readBatch)
	for {
		if _, stopped, err := r.upIn.Wait(); stopped || err != nil {
			return
		}
		n, err := r.listen.TryReadBatch(msgs)
		if err != nil {
			// Not expected on an unconnected socket; the pause keeps an
			// error that persists from spinning a high-priority thread.
			r.up.stats.internalError()
			time.Sleep(time.Millisecond)
			continue
		}
		now := r.clk.Now()
		pkts = pkts[:0]
		for _, m := range msgs[:n] {
			if m.Truncated {
				r.up.stats.tooBig()
				continue
			}
			f := r.flowFor(m.Addr, now)
			if f == nil {
				r.up.stats.unroutable()
				continue
			}
			pkts = append(pkts, r.stamp(m.Buf[:m.N], f.id, now))
		}
		if len(pkts) > 0 {
			r.up.offer(pkts)
		}
	}
}

func newReadBuffers(n, size int) []batchio.Message {
	msgs := make([]batchio.Message, n)
	for i := range msgs {
		msgs[i].Buf = make([]byte, size)
	}
	return msgs
}
