package loadcmp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/satquic/satquic/internal/hq"
)

// Server is one stack's HTTP/3 server under test.
type Server interface {
	// Name names the stack in tables ("satquic", "quic-go").
	Name() string
	// Start starts a fresh server on loopback that serves
	// payload.Handler.
	Start(ctx context.Context, certs Certs) (Instance, error)
}

// Instance is a running server.
type Instance interface {
	// Addr is where it listens, HOST:PORT.
	Addr() string
	// CPUTime is the processor time the server used so far, user and
	// system; false if it cannot be metered apart from this process.
	CPUTime() (time.Duration, bool)
	// Stop stops it and reports how it ended.
	Stop() error
}

// Certs is the certificate every server presents, as files for child
// processes, and the pin clients check it with.
type Certs struct {
	CertFile, KeyFile string
	// Fingerprint is the certificate's SHA-256 in hex.
	Fingerprint string
	// TLS is the certificate itself, for servers in this process.
	TLS tls.Certificate
}

// ClientTLS trusts exactly the certificate.
func (c Certs) ClientTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, VerifyPeerCertificate: hq.VerifyPin(c.Fingerprint)}
}

// WriteCerts makes a self-signed certificate for the loopback names and
// writes it and its key, readable by the owner only, into dir.
func WriteCerts(dir string) (Certs, error) {
	cert, err := hq.SelfSigned([]string{"localhost", "127.0.0.1", "::1"}, time.Now())
	if err != nil {
		return Certs{}, fmt.Errorf("loadcmp: certificate: %w", err)
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return Certs{}, fmt.Errorf("loadcmp: certificate key: %w", err)
	}
	c := Certs{
		CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"),
		Fingerprint: hq.Fingerprint(cert.Certificate[0]), TLS: cert,
	}
	var chain []byte
	for _, der := range cert.Certificate {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	if err := os.WriteFile(c.CertFile, chain, 0o644); err != nil {
		return Certs{}, fmt.Errorf("loadcmp: %w", err)
	}
	if err := os.WriteFile(c.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		return Certs{}, fmt.Errorf("loadcmp: %w", err)
	}
	return c, nil
}

// ProcessServer is a server run as a child process: Argv followed by
// --addr 127.0.0.1:0 --cert FILE --key FILE. The program prints
// {"listening":"HOST:PORT"} on one line once it listens and stops on
// SIGTERM, as "satquic bench load-server" and "quicgo-peer load-server"
// do.
type ProcessServer struct {
	Stack string
	Argv  []string
}

// Name is the stack's name.
func (p *ProcessServer) Name() string { return p.Stack }

// startTimeout bounds the wait for a server's announcement, and
// stopGrace its exit after SIGTERM.
const (
	startTimeout = 10 * time.Second
	stopGrace    = 5 * time.Second
)

// process is a running ProcessServer.
type process struct {
	addr string
	pid  int
	stop func() error
}

func (p *process) Addr() string { return p.addr }
func (p *process) Stop() error  { return p.stop() }

// CPUTime reads the child's processor time from /proc.
func (p *process) CPUTime() (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return 0, false
	}
	d, err := parseProcStatCPU(b, clockTicks)
	return d, err == nil
}

// Start runs the program and waits for its address.
func (p *ProcessServer) Start(ctx context.Context, certs Certs) (Instance, error) {
	if len(p.Argv) == 0 {
		return nil, errors.New("loadcmp: a process server without a program")
	}
	args := append(append([]string{}, p.Argv[1:]...), "--addr", "127.0.0.1:0", "--cert", certs.CertFile, "--key", certs.KeyFile)
	cmd := exec.Command(p.Argv[0], args...)
	cmd.SysProcAttr = childProcAttr()
	lines := &announceWriter{ready: make(chan struct{})}
	stderr := &tailWriter{max: 2048}
	cmd.Stdout, cmd.Stderr = lines, stderr
	cmd.WaitDelay = time.Second
	name := p.Stack + " server (" + strings.Join(p.Argv, " ") + ")"
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("loadcmp: starting the %s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	fail := func(err error) error {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return fmt.Errorf("loadcmp: %s: %w", name, err)
	}
	kill := func() {
		_ = cmd.Process.Kill()
		<-done
	}
	t := time.NewTimer(startTimeout)
	defer t.Stop()
	select {
	case <-lines.ready:
	case err := <-done:
		if err == nil {
			err = errors.New("exited before it listened")
		}
		return nil, fail(err)
	case <-t.C:
		kill()
		return nil, fail(fmt.Errorf("no address announced within %v", startTimeout))
	case <-ctx.Done():
		kill()
		return nil, fail(ctx.Err())
	}
	var ann struct {
		Listening string `json:"listening"`
	}
	if err := json.Unmarshal(lines.first(), &ann); err != nil || ann.Listening == "" {
		kill()
		return nil, fail(fmt.Errorf("announcement %q is not {\"listening\":\"HOST:PORT\"}", lines.first()))
	}
	if _, _, err := net.SplitHostPort(ann.Listening); err != nil {
		kill()
		return nil, fail(fmt.Errorf("announced address %q: %w", ann.Listening, err))
	}
	stop := func() error {
		select {
		case err := <-done:
			return fail(fmt.Errorf("exited before it was stopped: %v", err))
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(stopGrace)
		defer t.Stop()
		select {
		case err := <-done:
			if err != nil {
				return fail(fmt.Errorf("stopping: %w", err))
			}
			return nil
		case <-t.C:
			kill()
			return fail(fmt.Errorf("still running %v after SIGTERM; killed", stopGrace))
		}
	}
	return &process{addr: ann.Listening, pid: cmd.Process.Pid, stop: stop}, nil
}

// announceWriter keeps a program's first line of output and signals it.
type announceWriter struct {
	mu    sync.Mutex
	buf   []byte
	line  []byte
	ready chan struct{}
}

func (w *announceWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.line != nil {
		return len(b), nil
	}
	w.buf = append(w.buf, b...)
	if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
		w.line = bytes.Clone(w.buf[:i])
		w.buf = nil
		close(w.ready)
	} else if len(w.buf) > 4096 {
		// No announcement is this long; keep the start for the error.
		w.line = bytes.Clone(w.buf[:4096])
		w.buf = nil
		close(w.ready)
	}
	return len(b), nil
}

func (w *announceWriter) first() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.line
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(b), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}
