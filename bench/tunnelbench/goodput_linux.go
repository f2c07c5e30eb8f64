package tunnelbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/internal/report"
	"github.com/satquic/satquic/tunnel"
	"golang.org/x/sys/unix"
)

// GoodputConfig configures a goodput run.
type GoodputConfig struct {
	Flows          []int     // parallel TCP flows of each measurement
	LossPercents   []float64 // uniform loss on the link, in percent
	Duration       time.Duration
	Seed           uint64
	Prefix         string
	ClientEnd      []string // as Config.ClientEnd
	FECMaxOverhead float64  // as Config.FECMaxOverhead
	Progress       io.Writer
	// ProfileDir, if set, gets a CPU profile of each tunnel end for each
	// stack and loss: server-STACK-LOSS.pprof (this process: the server
	// end and the inner TCP ends) and client-STACK-LOSS.pprof.
	ProfileDir string
	// Stacks are the rows to measure, of GoodputStacks (none: all).
	Stacks []string
}

// GoodputResult is one measurement.
type GoodputResult struct {
	// Stack is tunnel-fec, tunnel-nofec, or satquic (a plain satquic
	// download on loopback, the reference).
	Stack string `json:"stack"`
	// Link is "veth" (the tunnel's path between two namespaces) or
	// "loopback"; LossMethod says how the kernel drops LossPercent of the
	// packets on the veth, in both directions.
	Link        string  `json:"link"`
	LossPercent float64 `json:"loss_percent"`
	LossMethod  string  `json:"loss_method,omitempty"`
	Flows       int     `json:"flows"`
	Bytes       int64   `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	GoodputGbps float64 `json:"goodput_gbps"`
	// Inner TCP's segments sent for the first time (OutSegs) and again
	// (RetransSegs) in the client's namespace (/proc/net/snmp), and the
	// share of retransmissions among all segments sent.
	OutSegs     uint64  `json:"tcp_out_segs,omitempty"`
	RetransSegs uint64  `json:"tcp_retrans_segs,omitempty"`
	RetransRate float64 `json:"tcp_retrans_rate"`
	// Rebuilt packets (both directions) and the tunnel forwarder's
	// overload drops.
	Rebuilt       uint64 `json:"fec_rebuilt"`
	OverloadDrops uint64 `json:"overload_drops"`
	// ServerReceived counts the packets the server end's sessions
	// received: against Client.DatagramsSent, what the server's QUIC
	// receive path lost.
	ServerReceived uint64 `json:"server_received"`
	// ServerDelivered counts the packets the server end wrote into its
	// device, ServerWriteErrors those the device refused.
	ServerDelivered   uint64 `json:"server_delivered"`
	ServerWriteErrors uint64 `json:"server_device_write_errors"`
	// ServerDatagramsDropped counts the datagrams the server end's QUIC
	// connections dropped from their queues, ServerHTTPDatagramsDropped
	// those its HTTP/3 layer dropped, ServerSessionDrops those its
	// CONNECT-IP sessions refused on receipt: all packets the client
	// end sent that the server's device never saw.
	ServerDatagramsDropped     uint64 `json:"server_datagrams_dropped"`
	ServerHTTPDatagramsDropped uint64 `json:"server_http_datagrams_dropped"`
	ServerSessionDrops         uint64 `json:"server_session_drops"`
	// ServerDeviceWrites counts the server end's writes into its TUN
	// device: ServerDelivered over it is how many packets a write joins
	// (tunnel.OffloadStats), each write costing a system call and a pass
	// of the kernel's receive path.
	ServerDeviceWrites uint64 `json:"server_device_writes"`
	// ServerPacketsSent counts the QUIC packets the server end sent: its
	// ACKs and the inner TCP's acknowledgements. Over ServerReceived it
	// is what each packet of data cost the way back.
	ServerPacketsSent uint64 `json:"server_packets_sent"`
	// Client is the client end's counters (datagram drops above all).
	Client tunnelCounts `json:"client_end"`
	// CPUSeconds is the CPU time (user and system) of both tunnel ends'
	// processes during the measurement: the client end's, and this
	// process's, which holds the server end and both inner TCP ends.
	// CPUNsPerByte divides it by the bytes carried: what the machine's
	// load does not change as much as the goodput.
	CPUSeconds   float64 `json:"cpu_s"`
	CPUNsPerByte float64 `json:"cpu_ns_per_byte"`
}

// goodputPort is the inner TCP sink's port.
const goodputPort = 5201

// RunGoodput measures, for each loss and flow count, bulk TCP through the
// tunnel with and without FEC, and a plain satquic download on loopback
// with as many connections.
func RunGoodput(ctx context.Context, cfg GoodputConfig) ([]GoodputResult, error) {
	if os.Geteuid() != 0 {
		return nil, ErrNeedsRoot
	}
	if len(cfg.Flows) == 0 || len(cfg.LossPercents) == 0 || cfg.Duration <= 0 || len(cfg.ClientEnd) == 0 {
		return nil, errors.New("goodput: want flows, losses, a positive duration and the client end's command")
	}
	stacks := cfg.Stacks
	if len(stacks) == 0 {
		stacks = GoodputStacks
	}
	var out []GoodputResult
	for _, flows := range cfg.Flows {
		if !slices.Contains(stacks, PlainSatquic) {
			break
		}
		r, err := plainSatquic(ctx, flows, cfg.Duration)
		if err != nil {
			return out, fmt.Errorf("plain satquic: %w", err)
		}
		cfg.progress(r)
		out = append(out, r)
	}
	for _, loss := range cfg.LossPercents {
		var kl kernelLoss
		if loss > 0 {
			var err error
			if kl, err = findLossTool(); err != nil {
				if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "skipping %g%% loss: %v\n", loss, err)
				}
				continue
			}
			if cfg.Progress != nil {
				fmt.Fprintf(cfg.Progress, "%g%% loss: %s\n", loss, kl.describe(loss))
			}
		}
		for _, stack := range []string{TunnelFEC, TunnelNoFEC} {
			if !slices.Contains(stacks, stack) {
				continue
			}
			rs, err := tunnelGoodput(ctx, cfg, stack, loss, kl)
			out = append(out, rs...)
			if err != nil {
				return out, fmt.Errorf("%s at %g%% loss: %w", stack, loss, err)
			}
		}
	}
	return out, nil
}

func (cfg GoodputConfig) progress(r GoodputResult) {
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "%s over %s, %g%% loss, %d flows: %.2f Gbit/s, inner TCP retransmitted %.4f%%, CPU %.2f ns/byte, server end dropped %d+%d+%d, %.1f packets per device write, %.3f packets back per packet received\n",
			r.Stack, r.Link, r.LossPercent, r.Flows, r.GoodputGbps, 100*r.RetransRate, r.CPUNsPerByte, r.ServerDatagramsDropped, r.ServerHTTPDatagramsDropped, r.ServerSessionDrops, r.packetsPerWrite(), r.packetsBack())
	}
}

// goodputPath is where a tunnel's goodput is measured: a veth pair, with
// the kernel dropping packets on it for a loss above 0.
type goodputPath struct {
	link       string
	lossMethod string
	cli, srv   side
	clientEnd  func(args ...string) *exec.Cmd
	serverAddr netip.Addr
	close      func()
}

// startGoodputPath is a veth pair; with loss, the kernel drops packets
// arriving on either end (kernelLoss), so that the link runs at the
// veth's speed rather than a user-space emulator's.
func startGoodputPath(cfg GoodputConfig, loss float64, kl kernelLoss) (goodputPath, error) {
	v, err := startVeth(cfg.Prefix)
	if err != nil {
		return goodputPath{}, err
	}
	p := goodputPath{link: "veth", cli: v.do(v.client), srv: v.do(v.server),
		clientEnd: func(args ...string) *exec.Cmd {
			return exec.Command("ip", append(append([]string{"netns", "exec", v.client}, cfg.ClientEnd...), args...)...)
		},
		serverAddr: netip.MustParseAddr(v.serverAddr), close: v.close}
	if loss == 0 {
		return p, nil
	}
	var removers []func()
	p.close = func() {
		for _, r := range removers {
			r()
		}
		v.close()
	}
	for _, ns := range []string{v.client, v.server} {
		err := inNamespace(ns, func() error { return disableDeviceFeature(vethDevice, udpSegmentationFeature) })
		if err == nil {
			var remove func()
			if remove, err = kl.apply(ns, vethDevice, loss); err == nil {
				removers = append(removers, remove)
			}
		}
		if err != nil {
			p.close()
			return goodputPath{}, err
		}
	}
	p.lossMethod = kl.describe(loss)
	return p, nil
}

func tunnelGoodput(ctx context.Context, cfg GoodputConfig, stack string, loss float64, kl kernelLoss) ([]GoodputResult, error) {
	p, err := startGoodputPath(cfg, loss, kl)
	if err != nil {
		return nil, err
	}
	defer p.close()
	stopProfile, err := cfg.profile(&p, stack, loss)
	if err != nil {
		return nil, err
	}
	defer stopProfile()
	tun, err := startTunnel(ctx, p.srv, p.clientEnd, p.serverAddr, stack, cfg.FECMaxOverhead)
	if err != nil {
		return nil, err
	}
	defer tun.close()
	sink, err := startSink(p.srv, innerServer)
	if err != nil {
		return nil, err
	}
	defer sink.close()
	var out []GoodputResult
	for _, flows := range cfg.Flows {
		r, err := measureFlows(ctx, cfg, p, tun, sink, flows)
		if err != nil {
			return out, err
		}
		r.Stack, r.LossPercent = stack, loss
		cfg.progress(r)
		out = append(out, r)
	}
	return out, nil
}

// profile starts this process's CPU profile and has the client end write
// its own, when cfg.ProfileDir is set; the function it returns stops this
// process's (the client end's ends with it).
func (cfg GoodputConfig) profile(p *goodputPath, stack string, loss float64) (func(), error) {
	if cfg.ProfileDir == "" {
		return func() {}, nil
	}
	name := func(end string) string {
		return filepath.Join(cfg.ProfileDir, fmt.Sprintf("%s-%s-%g.pprof", end, stack, loss))
	}
	stop, err := startCPUProfile(name("server"))
	if err != nil {
		return nil, err
	}
	clientEnd, clientProfile := p.clientEnd, name("client")
	p.clientEnd = func(args ...string) *exec.Cmd {
		return clientEnd(append(args, "--cpuprofile", clientProfile)...)
	}
	return stop, nil
}

// measureFlows pushes flows TCP connections through the tunnel for
// cfg.Duration and counts what happened on the way.
func measureFlows(ctx context.Context, cfg GoodputConfig, p goodputPath, tun *liveTunnel, sink *sink, flows int) (GoodputResult, error) {
	var r GoodputResult
	before, err := readTCPCounters(p.cli)
	if err != nil {
		return r, err
	}
	fecBefore, err := tun.fec()
	if err != nil {
		return r, err
	}
	srvAll := tun.srv.Stats()
	srvBefore := srvAll.Tunnel
	cpuBefore := processCPU()
	n, secs, err := pushTCP(ctx, p.cli, sink.addr, flows, cfg.Duration)
	if err != nil {
		if c, cerr := tun.fec(); cerr == nil {
			err = fmt.Errorf("%w (client end now: %+v; server: %+v)", err, c, tun.srv.Stats())
		}
		return r, err
	}
	cpu := processCPU() - cpuBefore
	after, err := readTCPCounters(p.cli)
	if err != nil {
		return r, err
	}
	srvAllAfter := tun.srv.Stats()
	srvAfter := srvAllAfter.Tunnel
	fecAfter, err := tun.fec()
	if err != nil {
		return r, err
	}
	f := fecAfter.minus(fecBefore)
	r = GoodputResult{
		Link: p.link, LossMethod: p.lossMethod, Flows: flows, Bytes: n, Seconds: secs,
		GoodputGbps: float64(n) * 8 / secs / 1e9,
		OutSegs:     after.out - before.out, RetransSegs: after.retrans - before.retrans,
		Rebuilt:                    f.Recovered + f.RecoveredByPeer,
		OverloadDrops:              srvAfter.OverloadDrops - srvBefore.OverloadDrops + f.OverloadDrops,
		ServerReceived:             received(srvAfter) - received(srvBefore),
		ServerWriteErrors:          srvAfter.DeviceWriteErrors - srvBefore.DeviceWriteErrors,
		ServerDelivered:            srvAfter.Delivered.Packets - srvBefore.Delivered.Packets,
		ServerDatagramsDropped:     srvAllAfter.Transport.DatagramsDropped - srvAll.Transport.DatagramsDropped,
		ServerHTTPDatagramsDropped: srvAllAfter.Transport.HTTPDatagramsDropped - srvAll.Transport.HTTPDatagramsDropped,
		ServerSessionDrops:         receivedDrops(srvAllAfter.Sessions) - receivedDrops(srvAll.Sessions),
		ServerDeviceWrites:         deviceWrites(srvAfter) - deviceWrites(srvBefore),
		ServerPacketsSent:          srvAllAfter.Transport.PacketsSent - srvAll.Transport.PacketsSent,
		Client:                     f,
		CPUSeconds:                 cpu.Seconds() + f.CPUSeconds,
	}
	if n > 0 {
		r.CPUNsPerByte = r.CPUSeconds * 1e9 / float64(n)
	}
	// OutSegs leaves out retransmitted segments (RFC 4022 tcpOutSegs:
	// the tunnel carries OutSegs + RetransSegs packets).
	if sent := r.OutSegs + r.RetransSegs; sent > 0 {
		r.RetransRate = float64(r.RetransSegs) / float64(sent)
	}
	return r, nil
}

// packetsPerWrite is how many packets the server end's device writes
// joined on average.
func (r GoodputResult) packetsPerWrite() float64 {
	if r.ServerDeviceWrites == 0 {
		return 0
	}
	return float64(r.ServerDelivered) / float64(r.ServerDeviceWrites)
}

// packetsBack is how many packets the server end sent for each packet it
// received from the client end.
func (r GoodputResult) packetsBack() float64 {
	if r.ServerReceived == 0 {
		return 0
	}
	return float64(r.ServerPacketsSent) / float64(r.ServerReceived)
}

// processCPU is this process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sink accepts TCP connections and reads them to the end.
type sink struct {
	ln   net.Listener
	addr string
	wg   sync.WaitGroup
}

func startSink(ns side, addr netip.Addr) (*sink, error) {
	s := &sink{}
	if err := ns(func() (err error) {
		s.ln, err = net.Listen("tcp4", netip.AddrPortFrom(addr, goodputPort).String())
		return err
	}); err != nil {
		return nil, fmt.Errorf("TCP sink: %w", err)
	}
	s.addr = s.ln.Addr().String()
	s.wg.Go(func() {
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() {
				_, _ = io.Copy(io.Discard, c)
				_ = c.Close()
			})
		}
	})
	return s, nil
}

func (s *sink) close() {
	_ = s.ln.Close()
	s.wg.Wait()
}

// pushTCP writes through flows connections for d, then half-closes them
// and waits until the sink has read everything and closed: the bytes
// written over the time to the last close are the goodput.
func pushTCP(ctx context.Context, ns side, addr string, flows int, d time.Duration) (int64, float64, error) {
	conns := make([]*net.TCPConn, flows)
	for i := range conns {
		if err := ns(func() error {
			c, err := net.DialTimeout("tcp4", addr, 30*time.Second)
			if err == nil {
				conns[i] = c.(*net.TCPConn)
			}
			return err
		}); err != nil {
			for _, c := range conns[:i] {
				_ = c.Close()
			}
			return 0, 0, err
		}
	}
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, flows)
	buf := make([]byte, 256<<10)
	start := time.Now()
	stop := start.Add(d)
	for i, c := range conns {
		wg.Go(func() {
			defer c.Close()
			for time.Now().Before(stop) && ctx.Err() == nil {
				_ = c.SetWriteDeadline(stop.Add(30 * time.Second))
				n, err := c.Write(buf)
				total.Add(int64(n))
				if err != nil {
					errs[i] = err
					return
				}
			}
			_ = c.CloseWrite()
			_ = c.SetReadDeadline(time.Now().Add(time.Minute))
			_, _ = io.Copy(io.Discard, c) // the sink's close
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	return total.Load(), secs, errors.Join(errs...)
}

// readTCPCounters reads OutSegs and RetransSegs of the namespace's TCP
// (RFC 4022's tcpOutSegs and tcpRetransSegs) from the calling thread's
// view of /proc, the namespace's own.
func readTCPCounters(ns side) (tcpCounters, error) {
	var c tcpCounters
	err := ns(func() error {
		f, err := os.Open("/proc/thread-self/net/snmp")
		if err != nil {
			return err
		}
		defer f.Close()
		c, err = parseSNMP(f)
		return err
	})
	return c, err
}

// plainSatquic downloads over satquic's own QUIC (the bench stack
// "satquic", FEC under the auto policy) on loopback with flows
// connections at once for about d: the reference the tunnel's goodput is
// held against.
func plainSatquic(ctx context.Context, flows int, d time.Duration) (GoodputResult, error) {
	st, err := bench.LookupStack("satquic")
	if err != nil {
		return GoodputResult{}, err
	}
	here := func(fn func() error) error { return fn() }
	lo := netip.MustParseAddr("127.0.0.1")
	env := bench.Env{Server: bench.Host{Addr: lo, Do: here}, Client: bench.Host{Addr: lo, Do: here}}
	ep, err := st.Start(ctx, env)
	if err != nil {
		return GoodputResult{}, err
	}
	defer ep.Close()
	// A first download sizes the rest to last about d.
	const probe = 64 << 20
	dl, err := ep.Download(ctx, probe)
	if err != nil {
		return GoodputResult{}, err
	}
	size := max(probe, int64(float64(probe)*d.Seconds()/dl.Elapsed.Seconds())/int64(flows))
	var wg sync.WaitGroup
	errs := make([]error, flows)
	start := time.Now()
	for i := range flows {
		wg.Go(func() { _, errs[i] = ep.Download(ctx, size) })
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if err := errors.Join(errs...); err != nil {
		return GoodputResult{}, err
	}
	n := size * int64(flows)
	return GoodputResult{Stack: PlainSatquic, Link: "loopback", Flows: flows, Bytes: n, Seconds: secs,
		GoodputGbps: float64(n) * 8 / secs / 1e9}, nil
}

// GoodputTable is one row per measurement.
func GoodputTable(rs []GoodputResult) *report.Table {
	t := &report.Table{
		Title:   "TCP goodput through the tunnel (plain satquic on loopback for reference)",
		Columns: []string{"stack", "link", "loss", "flows", "Gbit/s", "CPU ns/B", "inner TCP retrans", "rebuilt", "overload drops", "dgram lost", "dgram queue drops", "server end drops"},
	}
	for _, r := range rs {
		retrans, rebuilt, cpu := "-", "-", "-"
		if r.Stack != "satquic" {
			cpu = fmt.Sprintf("%.2f", r.CPUNsPerByte)
			retrans = fmt.Sprintf("%.4f%% (%d/%d)", 100*r.RetransRate, r.RetransSegs, r.OutSegs+r.RetransSegs)
			rebuilt = strconv.FormatUint(r.Rebuilt, 10)
		}
		_ = t.AddRow(r.Stack, r.Link, fmt.Sprintf("%g%%", r.LossPercent), strconv.Itoa(r.Flows),
			fmt.Sprintf("%.2f", r.GoodputGbps), cpu, retrans, rebuilt, strconv.FormatUint(r.OverloadDrops, 10),
			strconv.FormatUint(r.Client.DatagramsLost, 10), strconv.FormatUint(r.Client.SendDropped+r.Client.ReceiveDropped, 10),
			strconv.FormatUint(r.ServerDatagramsDropped+r.ServerHTTPDatagramsDropped+r.ServerSessionDrops, 10))
	}
	return t
}

// deviceWrites counts the writes into a TUN device with offloads.
func deviceWrites(s tunnel.Stats) uint64 {
	if s.Offload == nil {
		return 0
	}
	return s.Offload.PlainWrites + s.Offload.CoalescedWrites
}

// receivedDrops counts the packets sessions refused on receipt.
func receivedDrops(s connectip.Stats) uint64 {
	d := s.Received.Dropped
	return d.Malformed + d.SourceNotAllowed + d.DestinationNotRouted + d.HopLimit + d.TooBig + d.UnknownContext
}

func received(s tunnel.Stats) uint64 {
	var n uint64
	for _, ss := range s.Sessions {
		n += ss.Received.Packets
	}
	return n
}

// GoodputDocument is what --mode goodput writes with --json.
type GoodputDocument struct {
	Experiment string            `json:"experiment"`
	Command    []string          `json:"command"`
	Version    string            `json:"satquic_version"`
	Seed       uint64            `json:"seed"`
	DurationS  float64           `json:"duration_s"`
	Machine    bench.MachineInfo `json:"machine"`
	Results    []GoodputResult   `json:"results"`
}

// WriteJSON writes d as indented JSON.
func (d GoodputDocument) WriteJSON(w io.Writer) error { return report.WriteJSON(w, d) }
