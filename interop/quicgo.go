//go:build linux

package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// quicgoImpl is quic-go, through the interop roles of the peer program
// internal/cmd/quicgo-peer, which Prepare builds from the source tree
// with the go command: quic-go is a test peer of satquic, never a
// dependency of its library or command.
type quicgoImpl struct {
	once sync.Once
	bin  string
	err  error
}

func (*quicgoImpl) Name() string { return "quic-go" }

func (*quicgoImpl) Protocols() []string { return []string{protoHQ, protoH3} }

func (*quicgoImpl) Unsupported(role Role, test string) string {
	switch {
	case test == testV2:
		return "quic-go speaks QUIC v2 but has no compatible version negotiation (RFC 9368) to move a v1 connection to it"
	case role == Client && test == testKeyUpdate:
		return "quic-go's client updates its keys only after 100,000 packets, a setting internal to quic-go"
	case role == Client && test == testChaCha20:
		return "quic-go uses crypto/tls, which has no setting to offer ChaCha20 alone"
	}
	return ""
}

// quicgoPeerPackage is the peer program, relative to the module root.
const quicgoPeerPackage = "internal/cmd/quicgo-peer"

// quicgoBuildTimeout bounds the build of the peer (a few seconds with a
// warm cache, a minute or so on a cold one).
const quicgoBuildTimeout = 5 * time.Minute

func (q *quicgoImpl) Prepare(ctx context.Context, work string) error {
	q.once.Do(func() {
		root, err := sourceRoot()
		if err != nil {
			q.err = err
			return
		}
		goTool, err := exec.LookPath("go")
		if err != nil {
			q.err = errors.New("the go command is not on PATH: it builds the quic-go peer from the source tree")
			return
		}
		q.bin = filepath.Join(work, "quicgo-peer")
		ctx, cancel := context.WithTimeout(ctx, quicgoBuildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, goTool, "build", "-o", q.bin, "./"+quicgoPeerPackage)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			q.err = fmt.Errorf("building %s: %w\n%s", quicgoPeerPackage, err, strings.TrimSpace(string(out)))
		}
	})
	return q.err
}

// sourceRoot finds satquic's source tree: the one this package was built
// from, or the module of the current directory.
func sourceRoot() (string, error) {
	var tried []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Dir(filepath.Dir(file))
		if isSourceRoot(dir) {
			return dir, nil
		}
		tried = append(tried, dir)
	}
	if out, err := exec.Command("go", "env", "GOMOD").Output(); err == nil {
		if mod := strings.TrimSpace(string(out)); mod != "" && mod != os.DevNull {
			dir := filepath.Dir(mod)
			if isSourceRoot(dir) {
				return dir, nil
			}
			tried = append(tried, dir)
		}
	}
	return "", fmt.Errorf("satquic's source tree is not found (tried %s): run from it, since the quic-go peer is built from %s",
		strings.Join(tried, ", "), quicgoPeerPackage)
}

func isSourceRoot(dir string) bool {
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module github.com/satquic/satquic\n") {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, quicgoPeerPackage, "main.go"))
	return err == nil
}

type processServer struct {
	p  *process
	at netip.AddrPort
}

func (s *processServer) addr() netip.AddrPort { return s.at }
func (s *processServer) stop() error          { return s.p.stop() }

// peerStartTimeout bounds a peer server's start: a process and a bind.
const peerStartTimeout = 20 * time.Second

func (q *quicgoImpl) StartServer(ctx context.Context, j *serverJob) (server, error) {
	cmd := j.host.command(q.bin, "interop-server", "--addr", netip.AddrPortFrom(j.host.addr, j.port).String(),
		"--cert", j.cert.certFile, "--key", j.cert.keyFile, "--www", j.www, "--alpn", j.proto,
		"--test", j.test, "--keylog", j.keyLog)
	p, err := startProcess(cmd, j.logs, "server")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, peerStartTimeout)
	defer cancel()
	line, err := p.firstLine(ctx)
	var ready struct {
		Listening string `json:"listening"`
	}
	if err == nil {
		err = json.Unmarshal(line, &ready)
	}
	var addr netip.AddrPort
	if err == nil {
		addr, err = netip.ParseAddrPort(ready.Listening)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("quic-go server: %w", err), p.stop())
	}
	return &processServer{p: p, at: addr}, nil
}

func (q *quicgoImpl) RunClient(ctx context.Context, j *clientJob) error {
	list := filepath.Join(j.logs, "urls.txt")
	if err := os.WriteFile(list, []byte(strings.Join(j.urls, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	args := []string{"interop-client", "--urls", list, "--download", j.download, "--alpn", j.proto,
		"--test", j.test, "--keylog", j.keyLog}
	if dl, ok := ctx.Deadline(); ok {
		args = append(args, "--timeout", time.Until(dl).Round(time.Millisecond).String())
	}
	p, err := startProcess(j.host.command(q.bin, args...), j.logs, "client")
	if err != nil {
		return err
	}
	return p.wait(ctx)
}
