package tunnelbench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/emulate"
	"github.com/satquic/satquic/netsim"
)

// Config configures a request run.
type Config struct {
	Profile  netsim.Profile
	Sizes    []int64
	Requests int // per stack and size
	Parallel int // kept-alive connections under way at once
	Gap      time.Duration
	Seed     uint64
	Stacks   []string
	// Lossless adds, for every stack, a run over the same profile with
	// its loss and outages off: the reference the p99 excess is measured
	// against.
	Lossless bool
	// Prefix names the namespaces (emulate.NamespaceConfig.Prefix).
	Prefix string
	// ClientEnd is the program and leading arguments of a command that
	// runs RunClientEnd with the arguments that follow ("satquic bench
	// tunnel-client").
	ClientEnd []string
	// FECMaxOverhead caps the FEC stacks' repair bytes as a share of
	// the source bytes sent (zero: the tunnel's default, 0.1).
	FECMaxOverhead float64
	// InnerCC is the congestion control of the inner HTTP client's and
	// server's sockets (TCP_CONGESTION); empty: the kernel's default.
	InnerCC string
	// WarmUp is the size of the response each new tunnel carries before
	// its requests are timed (zero: TunnelWarmUp; NoWarmUp: none, to
	// measure a tunnel's first requests).
	WarmUp   int64
	Progress io.Writer
}

func (c Config) check() error {
	switch {
	case len(c.Sizes) == 0:
		return errors.New("no size")
	case c.Requests < 1:
		return fmt.Errorf("--requests %d, want at least 1", c.Requests)
	case c.Parallel < 1:
		return fmt.Errorf("--parallel %d, want at least 1", c.Parallel)
	case c.Gap < 0:
		return fmt.Errorf("--gap %v is negative", c.Gap)
	case len(c.Stacks) == 0:
		return errors.New("no stack")
	case len(c.ClientEnd) == 0:
		return errors.New("no command for the tunnel's client end")
	case c.WarmUp < 0 && c.WarmUp != NoWarmUp:
		return fmt.Errorf("warm-up of %d bytes", c.WarmUp)
	}
	if c.InnerCC != "" {
		if err := bench.EnsureTCPCongestionControl(c.InnerCC); err != nil {
			return fmt.Errorf("--inner-cc: %w", err)
		}
	}
	for _, s := range c.Stacks {
		if !isStack(s) {
			return fmt.Errorf("unknown stack %q", s)
		}
	}
	if os.Geteuid() != 0 {
		return ErrNeedsRoot
	}
	return nil
}

// ErrNeedsRoot: the experiment creates network namespaces and TUN devices.
var ErrNeedsRoot = errors.New("bench tunnel runs through network namespaces and TUN devices and needs root")

// Run runs every stack over the profile (and its lossless twin with
// Lossless), each in fresh namespaces, and returns one Result per link,
// stack and size. After an error it returns the results so far.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	links := []string{LinkLossy}
	if cfg.Lossless {
		links = append(links, LinkLossless)
	}
	var out []Result
	for _, link := range links {
		p := cfg.Profile.WithSeed(cfg.Seed)
		if link == LinkLossless {
			p = withoutLoss(p)
		}
		for _, stack := range cfg.Stacks {
			rs, err := runStack(ctx, cfg, p, link, stack)
			out = append(out, rs...)
			if err != nil {
				return out, fmt.Errorf("%s over the %s link: %w", stack, link, err)
			}
		}
	}
	setExcess(out)
	return out, nil
}

// withoutLoss is p with nothing that drops packets: no random loss, no
// outage; rate, delay, jitter and delay steps stay.
func withoutLoss(p netsim.Profile) netsim.Profile {
	for _, l := range []*netsim.LinkConfig{&p.Up, &p.Down} {
		l.Loss, l.Outages = "", nil
	}
	p.Name += "-lossless"
	return p
}

// runStack runs the sizes of one stack over fresh namespaces.
func runStack(ctx context.Context, cfg Config, p netsim.Profile, link, stack string) ([]Result, error) {
	n, err := emulate.StartNamespaces(emulate.NamespaceConfig{Prefix: cfg.Prefix, Up: p.Up, Down: p.Down})
	if err != nil {
		return nil, err
	}
	defer n.Close()
	cli := func(fn func() error) error { return n.Do(n.Client(), fn) }
	srv := func(fn func() error) error { return n.Do(n.Server(), fn) }
	clientEnd := func(args ...string) *exec.Cmd {
		return n.Command(n.Client(), cfg.ClientEnd[0], append(cfg.ClientEnd[1:], args...)...)
	}
	target := n.Server().Addr
	var tun *liveTunnel
	if stack != Direct {
		if tun, err = startTunnel(ctx, srv, clientEnd, n.Server().Addr, stack, cfg.FECMaxOverhead); err != nil {
			return nil, err
		}
		defer tun.close()
		target = innerServer
	}
	control := innerControl(cfg.InnerCC)
	hs, err := startHTTPServer(srv, target, control)
	if err != nil {
		return nil, err
	}
	defer hs.close()
	var warmed int64
	if tun != nil && cfg.WarmUp != NoWarmUp {
		warmed = cmp.Or(cfg.WarmUp, TunnelWarmUp)
		if err := warmTunnel(ctx, cli, control, hs.addr, warmed); err != nil {
			return nil, fmt.Errorf("warming the tunnel up: %w", err)
		}
	}
	var out []Result
	for _, size := range cfg.Sizes {
		r, err := measure(ctx, cfg, n, tun, hs.addr, cli, link, stack, size)
		if err != nil {
			return out, err
		}
		r.WarmUpBytes = warmed
		out = append(out, r)
	}
	return out, nil
}

// TunnelWarmUp is what one response carries through a new tunnel before
// any request is timed: 16 MB, about 11,000 full packets, 1.3 s at
// starlink's 100 Mbit/s. A tunnel between two gateways is up long before
// and long after any one application's request, and carries other
// traffic: its outer connection has left its startup, and its FEC
// controller has replaced its prior (1% loss, faded over 4,000 sources)
// with what the path loses. Without it the requests measured the
// tunnel's own startup instead. On starlink the outer connection's BBR
// startup overflowed the link's queue (60 to 90 queue drops in the first
// 1.5 s, requests of up to 0.5 s among them), the first thousands of
// packets carried repairs at up to the 10% cap, and, with one 1 MB
// response at a time (--parallel 1), tunnel-nofec's outer connection
// never left its startup at all: every round was limited by the inner
// TCP, so it paced at 2.8 times the link's rate to the end of the run
// and never answered a loss as a tunnel in its steady state does (qlog of
// the server end).
const TunnelWarmUp = 16 << 20

// NoWarmUp as Config.WarmUp times a new tunnel's requests from its start.
const NoWarmUp = -1

// warmTunnel fetches size bytes from addr through the tunnel, on a
// connection of its own.
func warmTunnel(ctx context.Context, cli side, control socketControl, addr string, size int64) error {
	f := newFlow(cli, control)
	defer f.tr.CloseIdleConnections()
	_, _, err := f.get(ctx, addr, size)
	return err
}

// measure runs the requests of one size and reads the link's counters
// around them.
func measure(ctx context.Context, cfg Config, n *emulate.Namespaces, tun *liveTunnel, addr string, cli side, link, stack string, size int64) (Result, error) {
	label := fmt.Sprintf("%s %s %s", link, stack, bench.FormatSize(size))
	progress := func(done int) {
		if cfg.Progress != nil && (done%max(1, cfg.Requests/10) == 0 || done == cfg.Requests) {
			fmt.Fprintf(cfg.Progress, "\r%s: %d/%d requests", label, done, cfg.Requests)
		}
	}
	before := n.Stats()
	// The emulator's clock, which the profile's outages count from,
	// started ElapsedS ago.
	epoch := time.Now().Add(-time.Duration(before.ElapsedS * float64(time.Second)))
	srv := func(fn func() error) error { return n.Do(n.Server(), fn) }
	cliTCP, err := readInnerTCP(cli)
	if err != nil {
		return Result{}, err
	}
	srvTCP, err := readInnerTCP(srv)
	if err != nil {
		return Result{}, err
	}
	var fecBefore tunnelCounts
	if tun != nil {
		if fecBefore, err = tun.fec(); err != nil {
			return Result{}, err
		}
	}
	b := runBatch(ctx, cli, innerControl(cfg.InnerCC), addr, size, cfg.Requests, cfg.Parallel, cfg.Gap, progress)
	after := n.Stats()
	if cfg.Progress != nil {
		fmt.Fprintln(cfg.Progress)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if b.failed == len(b.times) || b.gaveUp {
		return Result{}, fmt.Errorf("%s: %d of %d requests failed, the first: %w", label, b.failed, len(b.times), b.firstErr)
	}
	r := newResult(stack, link, size, b)
	r.LinkBytes = linkBytes(after) - linkBytes(before)
	if b.payload > 0 {
		r.Overhead = float64(r.LinkBytes-b.payload) / float64(b.payload)
	}
	r.LatePackets = (after.Up.Late + after.Down.Late) - (before.Up.Late + before.Down.Late)
	r.LinkDrops = drops(after) - drops(before)
	r.QueueDrops = queueDrops(after) - queueDrops(before)
	if err := innerTCPDuring(&r, cli, srv, cliTCP, srvTCP); err != nil {
		return r, err
	}
	linkDrops, full := n.Drops()
	r.Slowest = slowest(b.requests, linkDrops, epoch)
	r.TailCauses = tailCauses(r.Slowest)
	if full && cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "%s: the emulator's drop log filled; the slowest requests' drops are partial\n", label)
	}
	if tun != nil {
		fecAfter, err := tun.fec()
		if err != nil {
			return r, err
		}
		r.FEC = fecAfter.minus(fecBefore)
		r.FECOverhead = r.FEC.fecOverhead(b.payload)
	}
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "%s: %s\n", label, TailSummary(r))
	}
	if b.failed > 0 && cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, "%s: %d requests failed, the first: %v\n", label, b.failed, b.firstErr)
	}
	return r, nil
}

// innerTCPDuring sets r's inner TCP counters from those read before the
// requests in each namespace.
func innerTCPDuring(r *Result, cli, srv side, cliBefore, srvBefore InnerTCP) error {
	c, err := readInnerTCP(cli)
	if err != nil {
		return err
	}
	s, err := readInnerTCP(srv)
	if err != nil {
		return err
	}
	r.ClientTCP, r.ServerTCP = c.minus(cliBefore), s.minus(srvBefore)
	return nil
}

// linkBytes are the bytes offered to the link model in both directions.
func linkBytes(s emulate.Stats) int64 { return s.Up.OfferedBytes + s.Down.OfferedBytes }

func queueDrops(s emulate.Stats) int64 { return s.Up.DroppedQueue + s.Down.DroppedQueue }

func drops(s emulate.Stats) int64 {
	return s.Up.DroppedLoss + s.Down.DroppedLoss + s.Up.DroppedOutage + s.Down.DroppedOutage +
		s.Up.DroppedQueue + s.Down.DroppedQueue
}
