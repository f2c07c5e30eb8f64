//go:build linux

package probe

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/satquic/satquic/emulate/internal/batchio"
	"github.com/satquic/satquic/emulate/internal/rtio"
)

// Config describes one measurement.
type Config struct {
	// Via is the emulator's listening address (its --listen).
	Via string
	// Sink is the local address the probe receives on in the uplink
	// direction and sends from in the downlink direction: the emulator's
	// --upstream.
	Sink string
	// Down measures the downlink (sink to client); otherwise the uplink.
	Down bool
	// RateBps is the offered rate, counting the IP and UDP headers, as
	// the link's rate does.
	RateBps float64
	// Size is the UDP payload of each datagram, at least MinSize.
	Size int
	// Duration is how long to send.
	Duration time.Duration
	// Warmup is left out of the delivered-rate window, while the link's
	// queue fills.
	Warmup time.Duration
	// Drain is how long to wait for stragglers after the last datagram.
	Drain time.Duration
	// Realtime runs the probe's sender and receiver at real-time priority
	// rather than at nice -20: right for a probe in a process of its own,
	// wrong beside an emulator in the same process (see rtio.Nice).
	Realtime bool
}

func (c Config) priority() rtio.Priority {
	if c.Realtime {
		return rtio.Realtime
	}
	return rtio.Nice
}

// Overhead is what IPv4 and UDP headers add to each datagram on the link.
const Overhead = 28

func (c Config) check() error {
	switch {
	case c.Size < MinSize || c.Size > 65000:
		return fmt.Errorf("size %d must be between %d and 65000 bytes", c.Size, MinSize)
	case !(c.RateBps > 0):
		return fmt.Errorf("rate %v must be positive", c.RateBps)
	case c.Duration <= 0:
		return fmt.Errorf("duration %v must be positive", c.Duration)
	case c.Warmup < 0 || c.Warmup >= c.Duration:
		return fmt.Errorf("warmup %v must be shorter than the duration %v", c.Warmup, c.Duration)
	case c.Drain < 0:
		return fmt.Errorf("drain %v is negative", c.Drain)
	}
	return nil
}

// packets is how many datagrams the run sends.
func (c Config) packets() int {
	pps := c.RateBps / float64((c.Size+Overhead)*8)
	return max(int(pps*c.Duration.Seconds()), 1)
}

// interval is the pacing gap between datagrams.
func (c Config) interval() time.Duration {
	return time.Duration(float64((c.Size+Overhead)*8) / c.RateBps * float64(time.Second))
}

// endpoints are the probe's two sockets: client talks to the emulator,
// sink stands in for the server.
type endpoints struct {
	client, sink *batchio.Conn
	flow         netip.AddrPort // the emulator's upstream socket for our client
}

func (e *endpoints) close() {
	e.client.UDP().Close()
	e.sink.UDP().Close()
}

func open(cfg Config) (*endpoints, error) {
	via, err := net.ResolveUDPAddr("udp", cfg.Via)
	if err != nil {
		return nil, fmt.Errorf("--via: %w", err)
	}
	sinkAddr, err := net.ResolveUDPAddr("udp", cfg.Sink)
	if err != nil {
		return nil, fmt.Errorf("--sink: %w", err)
	}
	sink, err := net.ListenUDP("udp", sinkAddr)
	if err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	client, err := net.DialUDP("udp", nil, via)
	if err != nil {
		sink.Close()
		return nil, fmt.Errorf("client: %w", err)
	}
	for _, c := range []*net.UDPConn{sink, client} {
		_ = c.SetReadBuffer(16 << 20)
		_ = c.SetWriteBuffer(16 << 20)
	}
	e := &endpoints{}
	if e.client, err = batchio.New(client); err == nil {
		e.sink, err = batchio.New(sink)
	}
	if err != nil {
		sink.Close()
		client.Close()
		return nil, err
	}
	return e, nil
}

// handshake sends hellos from the client until the sink hears one, which
// proves the path and tells the sink the emulator's address for the flow.
func (e *endpoints) handshake() error {
	hello := make([]byte, MinSize)
	putHello(hello)
	msgs := []batchio.Message{{Buf: make([]byte, 2048)}}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := e.client.UDP().Write(hello); err != nil {
			return fmt.Errorf("sending to the emulator: %w", err)
		}
		_ = e.sink.UDP().SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := e.sink.ReadBatch(msgs)
		if err == nil && n == 1 && isHello(msgs[0].Buf[:msgs[0].N]) {
			e.flow = msgs[0].Addr
			_ = e.sink.UDP().SetReadDeadline(time.Time{})
			return nil
		}
	}
	return errors.New("nothing reached the sink in 5 s: is the emulator running, with --upstream set to the probe's --sink?")
}

// Run performs one measurement.
func Run(cfg Config) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	e, err := open(cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	if err := e.handshake(); err != nil {
		return nil, err
	}
	clk, err := rtio.NewClock()
	if err != nil {
		return nil, err
	}
	from, to, dst := e.client, e.sink, netip.AddrPort{}
	if cfg.Down {
		from, to, dst = e.sink, e.client, e.flow
	}
	total := cfg.packets()
	rec, err := startReceiver(to, clk, total, cfg.priority())
	if err != nil {
		return nil, err
	}
	sent, sendErr := send(from, dst, clk, cfg, total)
	time.Sleep(cfg.Drain)
	rec.stop()
	if sendErr != nil {
		return nil, fmt.Errorf("sending: %w", sendErr)
	}
	return analyze(cfg, sent, rec), nil
}
