package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The kernel TCP stacks: HTTPS (HTTP/1.1 over TLS 1.3) over Linux TCP with
// one congestion control, set per socket with TCP_CONGESTION on both ends.
// HTTP/1.1 rather than HTTP/2, because Go's HTTP/2 flow-control window
// (4 MiB a stream) would cap a long fat path before the congestion
// control does, and these stacks are here to measure the congestion
// control.
func init() {
	Register("tcp-cubic", func() Stack { return &tcpStack{name: "tcp-cubic", cc: "cubic"} })
	Register("tcp-bbr", func() Stack { return &tcpStack{name: "tcp-bbr", cc: "bbr"} })
}

type tcpStack struct {
	name, cc string
}

func (s *tcpStack) Name() string { return s.name }

// HandshakeRTTs: one round trip for TCP's SYN and SYN-ACK, one for TLS
// 1.3's ClientHello and the server's flight; the request leaves with the
// client's Finished.
func (s *tcpStack) HandshakeRTTs() int { return 2 }

func (s *tcpStack) Check() error {
	if err := EnsureTCPCongestionControl(s.cc); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	_, err := BenchCertificate()
	return err
}

const availableCCPath = "/proc/sys/net/ipv4/tcp_available_congestion_control"

// EnsureTCPCongestionControl makes sure the kernel offers cc, loading its
// module (tcp_<cc>) when it does not yet.
func EnsureTCPCongestionControl(cc string) error {
	avail, err := availableCongestionControls()
	if err != nil {
		return err
	}
	if hasWord(avail, cc) {
		return nil
	}
	out, merr := exec.Command("modprobe", "tcp_"+cc).CombinedOutput()
	if avail2, err := availableCongestionControls(); err == nil && hasWord(avail2, cc) {
		return nil
	}
	why := strings.TrimSpace(string(out))
	if merr != nil && why == "" {
		why = merr.Error()
	}
	return fmt.Errorf("the kernel offers no %q congestion control (available: %s) and modprobe tcp_%s failed: %s", cc, avail, cc, why)
}

func availableCongestionControls() (string, error) {
	b, err := os.ReadFile(availableCCPath)
	if err != nil {
		return "", fmt.Errorf("reading the kernel's congestion controls: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if f == w {
			return true
		}
	}
	return false
}

// TCPCongestionControl returns a socket Control function that sets TCP_CONGESTION
// before the socket connects or listens; accepted sockets inherit the
// listener's.
func TCPCongestionControl(cc string) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc)
		}); err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("setting TCP congestion control %q: %w", cc, serr)
		}
		return nil
	}
}

// congestionOf reads the congestion control a TCP connection uses.
func congestionOf(c net.Conn) (string, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return "", errors.New("not a socket")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return "", err
	}
	var cc string
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		cc, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	}); err != nil {
		return "", err
	}
	return strings.TrimRight(cc, "\x00"), gerr
}

// ccListener checks that every accepted connection uses the congestion
// control under test: a socket that silently fell back to the default
// would measure the wrong stack.
type ccListener struct {
	net.Listener
	want string
	mu   sync.Mutex
	last string // the congestion control of the latest connection
	err  error  // the first mismatch
}

func (l *ccListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		cc, err := congestionOf(c)
		l.mu.Lock()
		l.last = cc
		if err == nil && cc != l.want {
			err = fmt.Errorf("server socket uses congestion control %q, want %q", cc, l.want)
		}
		if err != nil && l.err == nil {
			l.err = err
		}
		l.mu.Unlock()
		if err == nil {
			return c, nil
		}
		c.Close()
	}
}

func (l *ccListener) state() (last string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, l.err
}

func (s *tcpStack) Start(ctx context.Context, env Env) (Endpoints, error) {
	cert, err := BenchCertificate()
	if err != nil {
		return nil, err
	}
	lc := net.ListenConfig{Control: TCPCongestionControl(s.cc)}
	var ln net.Listener
	if err := env.Server.Do(func() (err error) {
		ln, err = lc.Listen(ctx, "tcp4", netip.AddrPortFrom(env.Server.Addr, 0).String())
		return err
	}); err != nil {
		return nil, fmt.Errorf("%s: server: %w", s.name, err)
	}
	ccl := &ccListener{Listener: ln, want: s.cc}
	var protos http.Protocols
	protos.SetHTTP1(true)
	srv := &http.Server{
		Handler:           BytesHandler(),
		Protocols:         &protos,
		ReadHeaderTimeout: time.Minute,
		// A failed download shows on the client's side, with its
		// context; the server's log would only interleave with the
		// progress lines.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(tls.NewListener(ccl, cert.ServerTLSConfig("http/1.1")))
	}()
	return &tcpEndpoints{stack: s, env: env, cert: cert, addr: ln.Addr().String(), srv: srv, ccl: ccl, done: done}, nil
}

type tcpEndpoints struct {
	stack *tcpStack
	env   Env
	cert  Certificate
	addr  string
	srv   *http.Server
	ccl   *ccListener
	done  chan struct{}
}

// client is a fresh HTTP/1.1 client whose one connection is dialled in the
// client's namespace with the stack's congestion control.
func (e *tcpEndpoints) client() *http.Transport {
	d := net.Dialer{Control: TCPCongestionControl(e.stack.cc)}
	var protos http.Protocols
	protos.SetHTTP1(true)
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := e.env.Client.Do(func() (err error) {
				c, err = d.DialContext(ctx, network, addr)
				return err
			})
			return c, err
		},
		TLSClientConfig:    e.cert.ClientTLSConfig("http/1.1"),
		Protocols:          &protos,
		DisableKeepAlives:  true,
		DisableCompression: true,
		// The run's context bounds the handshake; a fixed timeout would
		// cut it short on the GEO profiles with loss.
		TLSHandshakeTimeout: 0,
		ReadBufferSize:      64 << 10,
	}
}

func (e *tcpEndpoints) Download(ctx context.Context, size int64) (Download, error) {
	tr := e.client()
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, BytesURL(e.addr, size), nil)
	if err != nil {
		return Download{}, err
	}
	start := time.Now()
	n, err := FetchBytes(&http.Client{Transport: tr}, req, size)
	elapsed := time.Since(start)
	cc, ccErr := e.ccl.state()
	if ccErr != nil {
		return Download{}, fmt.Errorf("%s: %w", e.stack.name, ccErr)
	}
	if err != nil {
		return Download{}, fmt.Errorf("%s: download of %d bytes: %w", e.stack.name, size, err)
	}
	return Download{Elapsed: elapsed, Bytes: n, Detail: "cc=" + cc}, nil
}

func (e *tcpEndpoints) Close() error {
	err := e.srv.Close()
	<-e.done
	return err
}
