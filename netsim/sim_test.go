package netsim

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"
)

var (
	clientAddr = netip.MustParseAddrPort("10.0.0.1:1000")
	serverAddr = netip.MustParseAddrPort("10.0.0.2:443")
)

// echoServer sends every datagram back to its sender at once.
type echoServer struct{ pending []Datagram }

func (e *echoServer) Receive(_ time.Duration, from netip.AddrPort, data []byte) {
	e.pending = append(e.pending, Datagram{To: from, Data: data})
}

func (e *echoServer) Poll(time.Duration) ([]Datagram, time.Duration, bool) {
	out := e.pending
	e.pending = nil
	return out, 0, false
}

// pinger sends a ping of size bytes every interval, count times, and
// records when each echo comes back.
type pinger struct {
	to       netip.AddrPort
	size     int
	interval time.Duration
	count    int
	sent     int
	nextAt   time.Duration
	echoes   []time.Duration
}

func (p *pinger) Receive(now time.Duration, _ netip.AddrPort, _ []byte) {
	p.echoes = append(p.echoes, now)
}

func (p *pinger) Poll(now time.Duration) ([]Datagram, time.Duration, bool) {
	var out []Datagram
	for p.sent < p.count && p.nextAt <= now {
		out = append(out, Datagram{To: p.to, Data: packet(byte(p.sent), p.size)})
		p.sent++
		p.nextAt += p.interval
	}
	return out, p.nextAt, p.sent < p.count
}

func newPingNetwork(t *testing.T, seed uint64, path LinkConfig) *Network {
	t.Helper()
	n := NewNetwork(NetworkConfig{Seed: seed})
	if _, err := n.AddPath(clientAddr.Addr(), serverAddr.Addr(), path, path); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPingExactTimes(t *testing.T) {
	n := newPingNetwork(t, 1, LinkConfig{RateBps: 10e6, Delay: 15 * ms})
	p := &pinger{to: serverAddr, size: 1000, interval: 100 * ms, count: 3}
	if err := n.Attach(serverAddr, &echoServer{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Attach(clientAddr, p); err != nil {
		t.Fatal(err)
	}
	if err := n.Run(time.Second); err != nil {
		t.Fatal(err)
	}
	// 0.8 ms on the wire and 15 ms of propagation each way.
	us := time.Microsecond
	want := []time.Duration{31600 * us, 131600 * us, 231600 * us}
	if !slices.Equal(p.echoes, want) {
		t.Errorf("echoes at %v, want %v", p.echoes, want)
	}
	if n.Now() != time.Second {
		t.Errorf("clock at %v after Run(1s)", n.Now())
	}
	if s := n.Stats(); s.Sent != 6 || s.Received != 6 {
		t.Errorf("stats %+v", s)
	}
}

func TestProfilePathDirections(t *testing.T) {
	n := NewNetwork(NetworkConfig{Seed: 1})
	p, _ := LookupProfile("geo")
	path, err := n.AddProfilePath(clientAddr.Addr(), serverAddr.Addr(), p)
	if err != nil {
		t.Fatal(err)
	}
	ping := &pinger{to: serverAddr, size: 1250, interval: time.Second, count: 1}
	_ = n.Attach(serverAddr, &echoServer{})
	_ = n.Attach(clientAddr, ping)
	if err := n.RunUntil(func() bool { return len(ping.echoes) == 1 }, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// Up at 10 Mbit/s (1 ms), down at 50 Mbit/s (0.2 ms), 325 ms each way.
	if want := 651200 * time.Microsecond; ping.echoes[0] != want {
		t.Errorf("echo at %v, want %v", ping.echoes[0], want)
	}
	up, down := path.Stats()
	if up.Delivered != 1 || down.Delivered != 1 || up.DeliveredBytes != 1250 {
		t.Errorf("path stats up %+v down %+v", up, down)
	}
}

// traceRun runs a pinger through a lossy, jittery path and returns the
// event trace.
func traceRun(t *testing.T, seed uint64) []string {
	var trace []string
	n := NewNetwork(NetworkConfig{Seed: seed, OnEvent: func(e Event) { trace = append(trace, e.String()) }})
	cfg := LinkConfig{RateBps: 5e6, Delay: 20 * ms, Jitter: 5 * ms, Reorder: true, Loss: "uniform:0.1", Duplicate: 0.01}
	if _, err := n.AddPath(clientAddr.Addr(), serverAddr.Addr(), cfg, cfg); err != nil {
		t.Fatal(err)
	}
	_ = n.Attach(serverAddr, &echoServer{})
	_ = n.Attach(clientAddr, &pinger{to: serverAddr, size: 1200, interval: ms, count: 500})
	if err := n.Run(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	return trace
}

func TestRunIsReproducibleFromSeed(t *testing.T) {
	a, b, c := traceRun(t, 7), traceRun(t, 7), traceRun(t, 8)
	if !slices.Equal(a, b) {
		t.Error("same seed, different traces")
	}
	if slices.Equal(a, c) {
		t.Error("seeds 7 and 8 give the same trace under 10% loss")
	}
	if len(a) < 1000 {
		t.Errorf("trace has only %d events", len(a))
	}
}

func TestUnroutableAndUnbound(t *testing.T) {
	n := newPingNetwork(t, 1, LinkConfig{Delay: ms})
	var kinds []EventKind
	n.cfg.OnEvent = func(e Event) { kinds = append(kinds, e.Kind) }
	nowhere := netip.MustParseAddrPort("192.0.2.1:53")
	unbound := netip.AddrPortFrom(serverAddr.Addr(), 9)
	_ = n.Attach(clientAddr, &pinger{to: nowhere, size: 10, interval: ms, count: 1})
	_ = n.Attach(netip.MustParseAddrPort("10.0.0.1:1001"), &pinger{to: unbound, size: 10, interval: ms, count: 1})
	if err := n.Run(time.Second); err != nil {
		t.Fatal(err)
	}
	if s := n.Stats(); s.NoRoute != 1 || s.NoPort != 1 || s.Received != 0 {
		t.Errorf("stats %+v", s)
	}
	if fmt.Sprint(kinds) != "[send no-route send no-port]" {
		t.Errorf("events %v", kinds)
	}
}

func TestTopologyErrors(t *testing.T) {
	n := newPingNetwork(t, 1, LinkConfig{})
	a, b := clientAddr.Addr(), serverAddr.Addr()
	if _, err := n.AddPath(b, a, LinkConfig{}, LinkConfig{}); err == nil {
		t.Error("a second path between the same nodes was accepted")
	}
	if _, err := n.AddPath(a, a, LinkConfig{}, LinkConfig{}); err == nil {
		t.Error("a path from a node to itself was accepted")
	}
	if _, err := n.AddPath(a, netip.MustParseAddr("10.0.0.9"), LinkConfig{RateBps: -1}, LinkConfig{}); err == nil {
		t.Error("an invalid link config was accepted")
	}
	if err := n.Attach(clientAddr, &echoServer{}); err != nil {
		t.Fatal(err)
	}
	if err := n.Attach(clientAddr, &echoServer{}); err == nil {
		t.Error("two endpoints bound to one address")
	}
	if err := n.Attach(netip.AddrPort{}, &echoServer{}); err == nil {
		t.Error("invalid address accepted")
	}
	if err := n.Wake(serverAddr); err == nil {
		t.Error("woke an address with no endpoint")
	}
}

// spinner always wants to be polled again right now.
type spinner struct{}

func (spinner) Receive(time.Duration, netip.AddrPort, []byte) {}
func (spinner) Poll(now time.Duration) ([]Datagram, time.Duration, bool) {
	return nil, now, true
}

func TestSpinningEndpointStopsTheRun(t *testing.T) {
	n := NewNetwork(NetworkConfig{MaxPollsAtOneTime: 50})
	_ = n.Attach(clientAddr, spinner{})
	if err := n.Run(time.Second); !errors.Is(err, ErrSpin) {
		t.Errorf("Run = %v, want ErrSpin", err)
	}
}

func TestRunUntilOutcomes(t *testing.T) {
	n := newPingNetwork(t, 1, LinkConfig{Delay: 10 * ms})
	p := &pinger{to: serverAddr, size: 10, interval: 100 * ms, count: 2}
	_ = n.Attach(serverAddr, &echoServer{})
	_ = n.Attach(clientAddr, p)
	err := n.RunUntil(func() bool { return len(p.echoes) == 2 }, 50*ms)
	if !errors.Is(err, ErrLimit) || n.Now() != 50*ms {
		t.Errorf("RunUntil = %v at %v, want ErrLimit at 50ms", err, n.Now())
	}
	if err := n.RunUntil(func() bool { return len(p.echoes) == 2 }, time.Second); err != nil || n.Now() != 120*ms {
		t.Errorf("RunUntil = %v at %v, want success at 120ms", err, n.Now())
	}
	if err := n.RunUntil(func() bool { return false }, time.Hour); !errors.Is(err, ErrIdle) {
		t.Errorf("RunUntil = %v, want ErrIdle", err)
	}
}

func TestWakeSchedulesAPoll(t *testing.T) {
	n := newPingNetwork(t, 1, LinkConfig{Delay: ms})
	p := &pinger{to: serverAddr, size: 10, interval: ms, count: 0}
	_ = n.Attach(clientAddr, p)
	_ = n.Attach(serverAddr, &echoServer{})
	_ = n.Run(time.Second)
	p.count = 1
	if err := n.Wake(clientAddr); err != nil {
		t.Fatal(err)
	}
	_ = n.Run(2 * time.Second)
	if !slices.Equal(p.echoes, []time.Duration{time.Second + 2*ms}) {
		t.Errorf("echoes %v, want one at 1.002s", p.echoes)
	}
}
