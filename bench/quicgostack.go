package bench

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The quic-go stack: quic-go's HTTP/3 server and client, as users run them
// (default configuration), downloading /bytes?n=N like the kernel TCP
// stacks. quic-go lives in a program of its own, internal/cmd/quicgo-peer,
// so that it never becomes a dependency of the satquic library or binary:
// the stack builds that program from the source tree with the Go toolchain
// once (Check), and runs its server and client inside the namespaces
// (Host.Command). The client times the download itself, from the start
// of its connection to the last byte, so that starting a process costs
// the measurement nothing.
func init() {
	Register("quic-go", func() Stack { return &quicgoStack{} })
}

// quicgoPeerPackage is the peer program's package, relative to the root
// of the module.
const quicgoPeerPackage = "internal/cmd/quicgo-peer"

// modulePath identifies satquic's source tree.
const modulePath = "github.com/satquic/satquic"

type quicgoStack struct {
	// name is the stack's name, "quic-go" when empty.
	name string
	// zeroRTT: the server accepts 0-RTT and the client comes back, as
	// the resume experiment's 0-RTT stacks do (resume.go).
	zeroRTT bool

	mu       sync.Mutex
	prepared bool
	err      error  // why the peer could not be built, once tried
	dir      string // temporary directory: the program, certificate and key
}

func (s *quicgoStack) Name() string {
	if s.name == "" {
		return "quic-go"
	}
	return s.name
}

// HandshakeRTTs: the Initial and Handshake flights take one round trip;
// the request leaves with the client's Finished, or with its ClientHello
// in 0-RTT.
func (s *quicgoStack) HandshakeRTTs() int {
	if s.zeroRTT {
		return 0
	}
	return 1
}

// Check builds the peer program, so that a missing toolchain or source
// tree shows before the first run rather than in it.
func (s *quicgoStack) Check() error {
	_, err := s.prepare()
	return err
}

// Close removes the built program and the certificate files.
func (s *quicgoStack) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	s.dir, s.prepared, s.err = "", false, nil
	if err != nil {
		return fmt.Errorf("quic-go: removing the peer program: %w", err)
	}
	return nil
}

// quicgoFiles are the paths the runs use.
type quicgoFiles struct {
	bin, cert, key string
}

func (s *quicgoStack) files() quicgoFiles {
	return quicgoFiles{
		bin:  filepath.Join(s.dir, "quicgo-peer"),
		cert: filepath.Join(s.dir, "cert.pem"),
		key:  filepath.Join(s.dir, "key.pem"),
	}
}

// prepare builds the peer and writes the benchmark certificate for it, the
// first time it is called.
func (s *quicgoStack) prepare() (quicgoFiles, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.prepared {
		s.prepared = true
		s.err = s.build()
		if s.err != nil && s.dir != "" {
			os.RemoveAll(s.dir)
			s.dir = ""
		}
	}
	if s.err != nil {
		return quicgoFiles{}, s.err
	}
	return s.files(), nil
}

func (s *quicgoStack) build() error {
	goTool, err := goToolchain()
	if err != nil {
		return fmt.Errorf("quic-go: %w", err)
	}
	root, err := satquicSourceRoot(goTool)
	if err != nil {
		return fmt.Errorf("quic-go: %w", err)
	}
	cert, err := BenchCertificate()
	if err != nil {
		return err
	}
	if s.dir, err = os.MkdirTemp("", "satquic-quicgo-peer-"); err != nil {
		return fmt.Errorf("quic-go: %w", err)
	}
	f := s.files()
	if err := writeCertificatePEM(cert, f.cert, f.key); err != nil {
		return fmt.Errorf("quic-go: %w", err)
	}
	cmd := exec.Command(goTool, "build", "-o", f.bin, "./"+quicgoPeerPackage)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("quic-go: building %s in %s: %w\n%s", quicgoPeerPackage, root, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// goToolchain finds the go command: on PATH, or in $GOROOT/bin.
func goToolchain() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if gr := os.Getenv("GOROOT"); gr != "" {
		p := filepath.Join(gr, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Go toolchain (the go command is neither on PATH nor in $GOROOT/bin): the stack builds its quic-go peer from source; install Go or put it on PATH (sudo may reset PATH: sudo env PATH=$PATH ...)")
}

// satquicSourceRoot finds the source tree the peer is built from: the one
// this package was compiled from, or else the module the current directory
// belongs to.
func satquicSourceRoot(goTool string) (string, error) {
	var tried []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Dir(filepath.Dir(file))
		if isSatquicRoot(root) {
			return root, nil
		}
		tried = append(tried, root)
	}
	cmd := exec.Command(goTool, "env", "GOMOD")
	if out, err := cmd.Output(); err == nil {
		if gomod := strings.TrimSpace(string(out)); gomod != "" && gomod != os.DevNull {
			root := filepath.Dir(gomod)
			if isSatquicRoot(root) {
				return root, nil
			}
			tried = append(tried, root)
		}
	}
	wd, _ := os.Getwd()
	where := "nowhere"
	if len(tried) > 0 {
		where = strings.Join(tried, " and ")
	}
	return "", fmt.Errorf("the source of %s/%s is not found (looked in %s); run from satquic's source tree (current directory: %s)", modulePath, quicgoPeerPackage, where, wd)
}

// isSatquicRoot reports whether dir holds satquic's go.mod and the peer's
// source.
func isSatquicRoot(dir string) bool {
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(string(mod), "\n")
	if strings.TrimSpace(first) != "module "+modulePath {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, quicgoPeerPackage, "main.go"))
	return err == nil
}

// writeCertificatePEM writes the benchmark certificate and its key for the
// peer program; the key is readable by its owner only.
func writeCertificatePEM(c Certificate, certFile, keyFile string) error {
	var certPEM []byte
	for _, der := range c.TLS.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	key, err := x509.MarshalPKCS8PrivateKey(c.TLS.PrivateKey)
	if err != nil {
		return fmt.Errorf("encoding the certificate key: %w", err)
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600)
}

func (s *quicgoStack) Start(ctx context.Context, env Env) (Endpoints, error) {
	f, err := s.prepare()
	if err != nil {
		return nil, err
	}
	// quic-go's HTTP/3 server accepts 0-RTT by default and hands out
	// connections early: the 0-RTT stacks run the same server.
	cmd := env.Server.Command(f.bin, "serve",
		"--addr", netip.AddrPortFrom(env.Server.Addr, 0).String(), "--cert", f.cert, "--key", f.key)
	srv, err := startProcess(cmd)
	if err != nil {
		return nil, fmt.Errorf("quic-go: server: %w", err)
	}
	var ready struct {
		Listening string `json:"listening"`
	}
	line, err := srv.firstLine(ctx, quicgoStartTimeout)
	if err == nil {
		err = json.Unmarshal(line, &ready)
	}
	if err == nil {
		if _, perr := netip.ParseAddrPort(ready.Listening); perr != nil {
			err = fmt.Errorf("announced address %q: %w", ready.Listening, perr)
		}
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("quic-go: server: %w", err), srv.stop())
	}
	return &quicgoEndpoints{env: env, files: f, srv: srv, addr: ready.Listening, zeroRTT: s.zeroRTT}, nil
}

// quicgoStartTimeout bounds the server's start (a process start and a
// bind: milliseconds, unless the machine is very busy).
const quicgoStartTimeout = 20 * time.Second

type quicgoEndpoints struct {
	env     Env
	files   quicgoFiles
	srv     *process
	addr    string
	zeroRTT bool
}

// quicgoResult is the JSON line of the peer's get.
type quicgoResult struct {
	Status          int    `json:"status"`
	Bytes           int64  `json:"bytes"`
	ElapsedNs       int64  `json:"elapsed_ns"`
	HandshakeNs     int64  `json:"handshake_ns"`
	FirstByteNs     int64  `json:"first_byte_ns"`
	SmoothedRTTNs   int64  `json:"srtt_ns"`
	PacketsReceived uint64 `json:"packets_received"`
	PacketsLost     uint64 `json:"packets_lost"`
	Resumed         bool   `json:"resumed"`
	Used0RTT        bool   `json:"used_0rtt"`
}

func (e *quicgoEndpoints) Download(ctx context.Context, size int64) (Download, error) {
	if err := e.srv.exited(); err != nil {
		return Download{}, fmt.Errorf("quic-go: server: %w", err)
	}
	args := []string{"get", "--url", BytesURL(e.addr, size), "--ca", e.files.cert,
		"--server-name", ServerName, "--expect", strconv.FormatInt(size, 10)}
	if e.zeroRTT {
		args = append(args, "--resume")
	}
	// The client gives up by itself a little after the context would
	// have it killed, so that it is never left behind.
	if dl, ok := ctx.Deadline(); ok {
		args = append(args, "--timeout", (time.Until(dl) + 5*time.Second).Round(time.Millisecond).String())
	}
	cl, err := startProcess(e.env.Client.Command(e.files.bin, args...))
	if err != nil {
		return Download{}, fmt.Errorf("quic-go: client: %w", err)
	}
	out, err := cl.wait(ctx)
	if err != nil {
		err = fmt.Errorf("quic-go: download of %d bytes: %w", size, err)
		if serr := e.srv.exited(); serr != nil {
			err = errors.Join(err, fmt.Errorf("quic-go: server: %w", serr))
		}
		return Download{}, err
	}
	var r quicgoResult
	if err := json.Unmarshal(out, &r); err != nil {
		return Download{}, fmt.Errorf("quic-go: the client's report %q: %w", out, err)
	}
	if r.Status != 200 || r.Bytes != size || r.ElapsedNs <= 0 {
		return Download{}, fmt.Errorf("quic-go: download of %d bytes: client reported status %d, %d bytes in %d ns", size, r.Status, r.Bytes, r.ElapsedNs)
	}
	detail := quicgoDetail(r)
	if e.zeroRTT {
		detail += fmt.Sprintf(" resumed=%v 0rtt=%v", r.Resumed, r.Used0RTT)
	}
	return Download{Elapsed: time.Duration(r.ElapsedNs), Bytes: r.Bytes, Detail: detail}, nil
}

// quicgoDetail is the client's view of the connection, in the satquic
// stack's terms (quic-go's default congestion control is CUBIC). The lost
// packets are the client's own, acknowledgements mostly.
func quicgoDetail(r quicgoResult) string {
	ms := func(ns int64) time.Duration { return time.Duration(ns).Round(time.Millisecond) }
	return fmt.Sprintf("cc=cubic handshake=%v ttfb=%v srtt=%v recv_pkts=%d client_lost=%d",
		ms(r.HandshakeNs), ms(r.FirstByteNs), ms(r.SmoothedRTTNs), r.PacketsReceived, r.PacketsLost)
}

func (e *quicgoEndpoints) Close() error {
	if err := e.srv.stop(); err != nil {
		return fmt.Errorf("quic-go: server: %w", err)
	}
	return nil
}

// quicgoStopGrace is how long a server has to exit after SIGTERM before it
// is killed.
const quicgoStopGrace = 5 * time.Second
