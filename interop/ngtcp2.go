//go:build linux

package interop

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ngtcp2Impl is ngtcp2 as Debian packages it (ngtcp2-client and
// ngtcp2-server): the example programs built with GnuTLS, gtlsclient and
// gtlsserver. They speak HTTP/3 only (the hq-interop programs, h09client
// and h09server, are not packaged), so every case with ngtcp2 runs over
// HTTP/3; the runner's checks look at the transport, which is the same.
type ngtcp2Impl struct {
	client, server string
}

// The programs and the packages that install them.
const (
	ngtcp2ClientBin = "gtlsclient"
	ngtcp2ServerBin = "gtlsserver"
	ngtcp2Packages  = "ngtcp2-client ngtcp2-server"
)

func (*ngtcp2Impl) Name() string { return "ngtcp2" }

func (*ngtcp2Impl) Protocols() []string { return []string{protoH3} }

func (*ngtcp2Impl) Unsupported(role Role, test string) string {
	switch {
	case test == testV2:
		return "ngtcp2 0.12 knows only QUIC v2's draft version 0x709a50c4, not RFC 9369's 0x6b3343cf"
	case role == Client && test == testMigrate:
		return "the harness does not drive the ngtcp2 client's migration (its --change-local-addr)"
	}
	return ""
}

// NgTCP2Missing says why the ngtcp2 programs cannot run here, or returns
// "" when they can.
func NgTCP2Missing() string {
	var missing []string
	for _, b := range []string{ngtcp2ClientBin, ngtcp2ServerBin} {
		if _, err := lookPath(b); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("%s not found (install the Debian packages %s)", strings.Join(missing, " and "), ngtcp2Packages)
}

// lookPath finds a program on PATH or in /usr/sbin, where Debian puts
// the server and where a user's PATH may not reach.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

func (n *ngtcp2Impl) Prepare(context.Context, string) error {
	if msg := NgTCP2Missing(); msg != "" {
		return errors.New(msg)
	}
	n.client, _ = lookPath(ngtcp2ClientBin)
	n.server, _ = lookPath(ngtcp2ServerBin)
	return nil
}

// ngtcp2ChaCha20 is the GnuTLS priority string that offers ChaCha20 alone.
const ngtcp2ChaCha20 = "NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305"

// ngtcp2ErrorMark starts the names of libngtcp2's errors (NGTCP2_ERR_...)
// as its example programs print them.
const ngtcp2ErrorMark = "ERR_"

// ngtcp2KeyUpdateAfter is when the ngtcp2 client updates its keys, after
// the handshake: early in a 3 MB download at 10 Mbit/s.
const ngtcp2KeyUpdateAfter = "500ms"

func (n *ngtcp2Impl) StartServer(ctx context.Context, j *serverJob) (server, error) {
	port := j.port
	if port == 0 {
		var err error
		if port, err = freePort(j.host); err != nil {
			return nil, err
		}
	}
	args := []string{"-q", "-d", j.www}
	if j.test == testRetry {
		args = append(args, "-V")
	}
	args = append(args, j.host.addr.String(), strconv.Itoa(int(port)), j.cert.keyFile, j.cert.certFile)
	cmd := j.host.command(n.server, args...)
	cmd.Env = append(os.Environ(), "SSLKEYLOGFILE="+j.keyLog)
	p, err := startProcess(cmd, j.logs, "server")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, peerStartTimeout)
	defer cancel()
	if err := waitUDPBound(ctx, j.host, port, p); err != nil {
		return nil, errors.Join(fmt.Errorf("ngtcp2 server: %w", err), p.stop())
	}
	return &processServer{p: p, at: netip.AddrPortFrom(j.host.addr, port)}, nil
}

func (n *ngtcp2Impl) RunClient(ctx context.Context, j *clientJob) error {
	base := []string{"-q", "--download=" + j.download, "--exit-on-all-streams-close"}
	switch j.test {
	case testChaCha20:
		base = append(base, "--ciphers="+ngtcp2ChaCha20)
	case testKeyUpdate:
		base = append(base, "--key-update="+ngtcp2KeyUpdateAfter)
	}
	run := func(label string, extra []string, urls []string) error {
		args := append(append(append([]string{}, base...), extra...), j.server.Addr().String(), strconv.Itoa(int(j.server.Port())))
		cmd := j.host.command(n.client, append(args, urls...)...)
		cmd.Env = append(os.Environ(), "SSLKEYLOGFILE="+j.keyLog)
		p, err := startProcess(cmd, j.logs, label)
		if err != nil {
			return err
		}
		if err := p.wait(ctx); err != nil {
			return err
		}
		// gtlsclient exits with status 0 after a connection that
		// failed (ERR_HANDSHAKE_TIMEOUT, ...): its library's error
		// names on stderr tell.
		if strings.Contains(p.tail.String(), ngtcp2ErrorMark) {
			return p.failure(errors.New(ngtcp2ClientBin + " reported an error"))
		}
		return nil
	}
	switch j.test {
	case testMulticonnect:
		for i, u := range j.urls {
			if err := run(fmt.Sprintf("client-%d", i), nil, []string{u}); err != nil {
				return err
			}
		}
		return nil
	case testResumption, testZeroRTT:
		// The session and the server's transport parameters go through
		// files from the first run to the second.
		session := []string{"--session-file=" + filepath.Join(j.logs, "session.pem"),
			"--tp-file=" + filepath.Join(j.logs, "tp.txt")}
		if j.test == testResumption {
			session = append(session, "--disable-early-data")
		}
		if err := run("client-1", session, j.urls[:1]); err != nil {
			return err
		}
		return run("client-2", session, j.urls[1:])
	}
	return run("client", nil, j.urls)
}

// freePort finds a UDP port nothing uses on the host, for a server that
// cannot pick its own and say which.
func freePort(h host) (uint16, error) {
	pc, err := h.listenUDP(netip.AddrPortFrom(h.addr, 0))
	if err != nil {
		return 0, err
	}
	defer pc.Close()
	return pc.LocalAddr().(*net.UDPAddr).AddrPort().Port(), nil
}

// waitUDPBound waits until a UDP socket of the host is bound to port,
// as the kernel's table of sockets (/proc/net/udp and udp6, read on the
// host) shows: ngtcp2's server says nothing when it is ready.
func waitUDPBound(ctx context.Context, h host, port uint16, p *process) error {
	want := fmt.Sprintf(":%04X ", port)
	for {
		out, _ := h.command("cat", "/proc/net/udp", "/proc/net/udp6").Output()
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) > 2 && strings.HasSuffix(f[1]+" ", want) {
				return nil
			}
		}
		if err := p.running(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("port %d not bound: %w", port, context.Cause(ctx))
		case <-time.After(20 * time.Millisecond):
		}
	}
}
