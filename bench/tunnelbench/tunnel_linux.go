package tunnelbench

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/satquic/satquic/bench"
	"github.com/satquic/satquic/gateway"
	"github.com/satquic/satquic/tunnel"
)

// The tunnel's inner addresses: the gateway's pool, whose first address
// is the server end's own.
var (
	innerPool   = netip.MustParsePrefix("10.99.0.0/24")
	innerServer = netip.MustParseAddr("10.99.0.1")
)

// gatewayPort is the UDP port of the tunnel's server end.
const gatewayPort = 4433

const benchToken = "satquic-bench-tunnel"

// tunnelDevice is the TUN device name in each namespace.
const tunnelDevice = "sqtun0"

// liveTunnel is a running tunnel between two namespaces: the server end
// in this process, on a socket and a TUN device opened in the server's
// namespace, and the client end in a child process that runs entirely in
// the client's namespace. The client end cannot run here: HTTP/3 dials
// its QUIC connection from a goroutine of its own, whose thread is not
// the one that entered the namespace, so its socket would open in this
// process's namespace.
type liveTunnel struct {
	srv    *gateway.Server
	cancel context.CancelFunc
	served chan error
	client *clientProcess
}

// startTunnel starts the gateway's server in srvNS on serverAddr and its
// client end with clientCmd (a command that runs RunClientEnd in the
// client's namespace, given the arguments), both with the QUIC
// configuration of stack. Afterwards innerServer, in srvNS, is reachable
// from the client's namespace through the tunnel.
func startTunnel(ctx context.Context, srvNS side, clientCmd func(args ...string) *exec.Cmd, serverAddr netip.Addr, stack string, maxOverhead float64) (*liveTunnel, error) {
	cert, err := bench.BenchCertificate()
	if err != nil {
		return nil, err
	}
	var (
		dev *tunnel.TUN
		pc  net.PacketConn
	)
	err = srvNS(func() (err error) {
		dev, err = tunnel.OpenTUN(tunnel.TUNConfig{
			Name: tunnelDevice, MTU: 1500,
			Addrs: []netip.Prefix{netip.PrefixFrom(innerServer, innerPool.Bits())},
		})
		if err != nil {
			return err
		}
		pc, err = net.ListenPacket("udp4", netip.AddrPortFrom(serverAddr, gatewayPort).String())
		if err != nil {
			_ = dev.Close()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tunnel server: %w", err)
	}
	srv, err := gateway.NewServer(dev, gateway.ServerConfig{
		Token: benchToken, Pool: []netip.Prefix{innerPool}, Local: []netip.Addr{innerServer},
	})
	if err != nil {
		_ = dev.Close()
		_ = pc.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	t := &liveTunnel{srv: srv, cancel: cancel, served: make(chan error, 1)}
	go func() {
		t.served <- srv.Serve(runCtx, pc, cert.ServerTLSConfig("h3"), quicConfig(stack, maxOverhead), nil)
	}()
	url := "https://" + netip.AddrPortFrom(serverAddr, gatewayPort).String()
	// The child trusts this process's certificate, which it is given.
	ca := base64.StdEncoding.EncodeToString(cert.TLS.Leaf.Raw)
	if t.client, err = startClientProcess(ctx, clientCmd("--url", url, "--stack", stack, "--ca", ca,
		"--fec-max-overhead", strconv.FormatFloat(maxOverhead, 'g', -1, 64))); err != nil {
		cancel()
		<-t.served
		return nil, fmt.Errorf("tunnel client: %w", err)
	}
	return t, nil
}

// fec reads the client end's FEC counters, with the server end's repair
// and source bytes.
func (t *liveTunnel) fec() (tunnelCounts, error) {
	c, err := t.client.stats()
	tr := t.srv.Stats().Transport
	c.ServerRepairBytesSent, c.ServerSourceBytesSent = tr.RepairBytesSent, tr.SourceBytesSent
	c.ServerPacketsLost, c.ServerLossRepairsSent = tr.PacketsLost, tr.LossRepairsSent
	c.ServerOverdueSources = tr.OverdueSources
	c.ServerDatagramsHeld, c.ServerHeldGivenUp = tr.DatagramsHeld, tr.HeldPacketsGivenUp
	return c, err
}

// close stops both ends and waits for them.
func (t *liveTunnel) close() error {
	cerr := t.client.stop()
	t.cancel()
	return errors.Join(cerr, <-t.served)
}

// clientProcess is the child that runs the client end: it says when the
// tunnel is up with a line on its stdout, answers each "stats" line on its
// stdin with a line of counters, and ends when its stdin closes.
type clientProcess struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *strings.Builder
	mu     sync.Mutex
}

// clientStartTimeout bounds the handshake, the path MTU discovery and the
// address assignment of the client end over a lossy, long path.
const clientStartTimeout = 60 * time.Second

func startClientProcess(ctx context.Context, cmd *exec.Cmd) (*clientProcess, error) {
	p := &clientProcess{cmd: cmd, stderr: new(strings.Builder)}
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.out = bufio.NewScanner(out)
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() { ready <- p.readLine(new(clientReady)) }()
	select {
	case err = <-ready:
	case <-time.After(clientStartTimeout):
		err = fmt.Errorf("no tunnel after %v", clientStartTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		_ = p.cmd.Process.Kill()
		_ = p.stop()
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(p.stderr.String()))
	}
	return p, nil
}

// clientReady is the client end's first line.
type clientReady struct {
	MTU int `json:"mtu"`
}

func (p *clientProcess) readLine(v any) error {
	if !p.out.Scan() {
		if err := p.out.Err(); err != nil {
			return err
		}
		return errors.New("the client end exited")
	}
	return json.Unmarshal(p.out.Bytes(), v)
}

func (p *clientProcess) stats() (tunnelCounts, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var c tunnelCounts
	if _, err := io.WriteString(p.in, "stats\n"); err != nil {
		return c, err
	}
	return c, p.readLine(&c)
}

// stop closes the child's stdin and waits for it to end.
func (p *clientProcess) stop() error {
	_ = p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("client end: %w: %s", err, strings.TrimSpace(p.stderr.String()))
		}
		return nil
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
		return errors.New("client end: did not stop within 10 s of its input closing")
	}
}

// RunClientEnd is the client end of a benchmark tunnel, in the namespace
// the process runs in: it dials the gateway at --url with the QUIC
// configuration of --stack, opens the TUN device, forwards, and speaks
// the protocol of clientProcess on in and out until in closes.
func RunClientEnd(args []string, in io.Reader, out io.Writer) error {
	var url, stack, ca, profile string
	var maxOverhead float64
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--url":
			url = args[i+1]
		case "--stack":
			stack = args[i+1]
		case "--ca":
			ca = args[i+1]
		case "--cpuprofile":
			profile = args[i+1]
		case "--fec-max-overhead":
			v, err := strconv.ParseFloat(args[i+1], 64)
			if err != nil {
				return fmt.Errorf("client end: --fec-max-overhead: %w", err)
			}
			maxOverhead = v
		default:
			return fmt.Errorf("client end: unknown argument %q", args[i])
		}
	}
	if url == "" || !isStack(stack) || stack == Direct || ca == "" {
		return fmt.Errorf("client end: want --url URL --stack tunnel-... --ca CERT, got %q", args)
	}
	tlsConf, err := trusting(ca)
	if err != nil {
		return err
	}
	if profile != "" {
		stopProfile, err := startCPUProfile(profile)
		if err != nil {
			return fmt.Errorf("client end: %w", err)
		}
		defer stopProfile()
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientStartTimeout)
	ct, err := gateway.Dial(ctx, url, gateway.DialOptions{Token: benchToken, TLSConfig: tlsConf, QUIC: quicConfig(stack, maxOverhead)})
	cancel()
	if err != nil {
		return err
	}
	defer ct.Close()
	var routes []netip.Prefix
	for _, r := range ct.Routes {
		routes = append(routes, r.RangePrefixes()...)
	}
	dev, err := tunnel.OpenTUN(tunnel.TUNConfig{Name: tunnelDevice, MTU: ct.MTU, Addrs: ct.Prefixes, Routes: routes})
	if err != nil {
		return err
	}
	// The client's one session carries only this host's packets: its
	// device is held back rather than its packets dropped when the tunnel
	// is full.
	fwd := tunnel.New(dev, ct.Session, tunnel.Config{WaitWhenFull: true})
	runCtx, stop := context.WithCancel(context.Background())
	forwarded := make(chan error, 1)
	go func() { forwarded <- fwd.Run(runCtx) }()
	enc := json.NewEncoder(out)
	if err := enc.Encode(clientReady{MTU: ct.MTU}); err != nil {
		stop()
		return errors.Join(err, <-forwarded)
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if sc.Text() == "stats" {
			c := countsOf(ct.ConnStats())
			c.OverloadDrops = fwd.Stats().OverloadDrops
			c.CPUSeconds = processCPU().Seconds()
			c.PathTooSmall = ct.PathTooSmall()
			if err := enc.Encode(c); err != nil {
				break
			}
		}
	}
	stop()
	return <-forwarded
}

// startCPUProfile writes this process's CPU profile to path until the
// function it returns is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// trusting is the client's TLS configuration that verifies the server
// against the benchmark certificate whose DER is base64 in b64.
func trusting(b64 string) (*tls.Config, error) {
	der, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("client end: --ca: %w", err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("client end: --ca: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return &tls.Config{RootCAs: pool, ServerName: bench.ServerName, MinVersion: tls.VersionTLS13, NextProtos: []string{"h3"}}, nil
}
