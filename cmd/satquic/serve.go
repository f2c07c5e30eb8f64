package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/satquic/satquic/internal/hq"
)

// satquic serve: a directory over QUIC, with HTTP/3 and with hq-interop
// (HTTP/0.9, the protocol of the QUIC interop runner) on one port. It runs
// until interrupted, then lets the requests under way finish.

func init() {
	register(command{
		name:    "serve",
		summary: "serve a directory over QUIC with HTTP/3 and hq-interop (HTTP/0.9)",
		run:     runServe,
	})
}

const serveSynopsis = `serve --dir DIR [--addr HOST:PORT] [--alpn h3,hq-interop] [--cert FILE --key FILE] [--retry] [--0rtt] [--resume-key FILE] [--reset-key FILE] [--token-key FILE] [--sockets N] [--lb-server-id HEX] [-v] [limit flags] [QUIC flags]

Serves the regular files under DIR to clients of HTTP/3 (ALPN h3) and of
hq-interop (HTTP/0.9) on one UDP port; --alpn offers only the one named.
Over HTTP/3, DIR is served as by a web server: GET and HEAD, Range
requests, If-Modified-Since, directory listings, index.html. Over
hq-interop, a client's "GET /path" gets the file's bytes, or a stream
reset with code 0x194 (not found). Paths never leave DIR, through ".." or
symbolic links. Without --cert and --key, a self-signed ECDSA certificate
is made; its SHA-256 is printed, for "satquic get --pin". --retry makes
every client prove its address with a Retry first (unless a token from an
earlier connection does); --0rtt accepts requests sent in 0-RTT by
clients that resume a session, which an attacker could replay, and
answers them at once, with the server's handshake flight (0.5-RTT): a
resumed request then costs one round trip. Over HTTP/3 only GET, HEAD,
OPTIONS and TRACE requests are served before the handshake completed;
others wait for it, as a replay never completes it.

Careful Resume is on (--no-careful-resume turns it off): a satquic client
gets the path state the server measured, sealed, and returns it on its
next connection, which starts at the rate the path carried instead of
slow start. --resume-key gives the key that seals the states; servers of
a farm that share it resume each other's clients.

Keys kept across restarts: --reset-key derives the stateless reset tokens
(RFC 9000 section 10.3), so that after a restart the server's resets tell
the clients of the old process at once that their connections are gone
(with a new key they wait for their idle timeout); --token-key seals the
Retry and NEW_TOKEN tokens, so that those given before a restart, or by
another server of the farm, still save a round trip. Each is a file of 64
hex digits (openssl rand -hex 32 > FILE), readable by the server only.

The limits bound what clients can make the server hold: --max-handshakes
and --max-handshakes-per-ip the handshakes in progress, --max-conns and
--max-conns-per-ip the connections, handshakes included. A source is an
IPv4 address or an IPv6 /64, whatever its ports. A client beyond them is
refused (CONNECTION_REFUSED), unless it can take the place of a handshake
silent for a probe timeout, of a connection idle for half the idle
timeout, or of the oldest handshake once it has lasted four probe
timeouts. The refusals by limit, the evictions and the Retry packets
sent are logged on stderr with what the server holds (every 10 s when a
counter moved; every 10 s with -v) and counted at the end.

HTTP/3 clients cannot make the server hold much for long: a connection has
at most 100 request streams open (QUIC's MAX_STREAMS); a request header
must arrive whole within --header-timeout; a request stream whose client
sends nothing for --idle-stream-timeout while it is awaited is reset, and
so is a response that the client does not read for
--response-stall-timeout; the header data of a connection's incomplete
requests is bounded by --max-conn-header-bytes, and the request data of
all by --request-memory. What these refuse or cut off is logged on stderr
when it happens (every 10 s at most) and counted at the end.

--sockets N serves from N sockets bound to --addr with SO_REUSEPORT, each
read by its own goroutine (0: one per CPU); on Linux a BPF program on the
group brings every datagram to the socket of its connection, which the
server's connection IDs name; elsewhere the server says so and serves
from one. --lb-server-id writes a server ID into every connection ID in
the format of QUIC-LB (draft-ietf-quic-load-balancers), so that a load
balancer in front of several servers routes each connection to its own.

On SIGINT or SIGTERM, the server takes no new connections, sends HTTP/3
clients a GOAWAY, and waits up to --shutdown-timeout for the requests under
way, then prints how many connections and requests it served (and, with more
than one socket, what each received).`

type serveOptions struct {
	dir             string
	addr            string
	alpn            string
	certFile        string
	keyFile         string
	verbose         bool
	retry           bool
	zeroRTT         bool
	resumeKeyFile   string
	keyFiles        serverKeyFiles
	shutdownTimeout time.Duration
	debugAddr       string
	connLimits      serveLimits
	sockets         socketOptions
	limits          limitOptions
	quic            quicOptions
}

func runServe(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args, stdout, stderr, nil)
}

// serve runs the server until ctx ends; ready, if set, learns the
// listening address and the certificate's fingerprint once it listens.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr net.Addr, fingerprint string)) error {
	var o serveOptions
	fs := newFlagSet("serve", serveSynopsis, stderr)
	fs.StringVar(&o.dir, "dir", "", "directory to serve (required)")
	fs.StringVar(&o.addr, "addr", "localhost:4433", "UDP address to listen on")
	fs.StringVar(&o.alpn, "alpn", defaultALPN, "application protocols to offer: h3, hq-interop, or both")
	fs.StringVar(&o.certFile, "cert", "", "PEM certificate chain (with --key); default: a self-signed certificate")
	fs.StringVar(&o.keyFile, "key", "", "PEM private key of --cert")
	fs.BoolVar(&o.verbose, "v", false, "log every request on stderr")
	fs.BoolVar(&o.retry, "retry", false, "validate every client's address with a Retry packet (costs a round trip)")
	fs.BoolVar(&o.zeroRTT, "0rtt", false, "accept 0-RTT requests from clients resuming a session (replayable)")
	fs.StringVar(&o.resumeKeyFile, "resume-key", "", "file of 64 hex digits: the key that seals Careful Resume's path states, shared by the servers of a farm (default: a random key per run)")
	o.keyFiles.register(fs)
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 10*time.Second, "on SIGINT or SIGTERM, how long the requests under way may take to finish")
	fs.StringVar(&o.debugAddr, "debug-addr", "", "serve Go's profiles (/debug/pprof/) and the server's counters (/debug/vars) over plain HTTP on this TCP address; bind it to loopback")
	o.connLimits.register(fs)
	o.sockets.register(fs)
	o.limits.register(fs)
	o.quic.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := o.limits.check(); err != nil {
		return err
	}
	if o.dir == "" {
		return fmt.Errorf("%w: --dir is required", errUsage)
	}
	if (o.certFile == "") != (o.keyFile == "") {
		return fmt.Errorf("%w: --cert and --key go together", errUsage)
	}
	if o.debugAddr != "" {
		if _, err := net.ResolveTCPAddr("tcp", o.debugAddr); err != nil {
			return fmt.Errorf("%w: --debug-addr: %v", errUsage, err)
		}
	}
	if o.shutdownTimeout < 0 {
		return fmt.Errorf("%w: --shutdown-timeout must not be negative", errUsage)
	}
	protos, err := parseALPN(o.alpn)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(o.dir)
	if err != nil {
		return fmt.Errorf("%w: --dir: %v", errUsage, err)
	}
	defer root.Close()
	cert, err := serverCertificate(&o)
	if err != nil {
		return err
	}
	// The server picks the first of its protocols that the client
	// offers, so h3 wins when a client offers both.
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: protos}
	conf := o.quic.config()
	if err := o.connLimits.apply(conf); err != nil {
		return err
	}
	if conf.ResumeKey, err = readResumeKey(o.resumeKeyFile); err != nil {
		return err
	}
	resetKey, tokenKey, err := o.keyFiles.read()
	if err != nil {
		return err
	}
	conf.Allow0RTT = o.zeroRTT
	if o.retry {
		conf.RequireAddressValidation = func(net.Addr) bool { return true }
	}
	// A Transport of its own, rather than ListenAddr, so that closing the
	// Listener at shutdown stops new connections but leaves the
	// connections under way open until they are drained.
	tr, err := o.sockets.transport(o.addr)
	if err != nil {
		return err
	}
	tr.StatelessResetKey, tr.TokenKey = resetKey, tokenKey
	listen := tr.Listen
	if o.zeroRTT {
		// Requests that come in 0-RTT are answered at once, in 0.5-RTT,
		// rather than once the client's Finished arrived.
		listen = tr.ListenEarly
	}
	l, err := listen(tlsConf, conf)
	if err != nil {
		_ = tr.Close()
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer func() { _ = tr.Close() }()
	o.sockets.logSockets(tr, stderr)
	fp := hq.Fingerprint(cert.Certificate[0])
	abs, _ := filepath.Abs(o.dir)
	fmt.Fprintf(stdout, "serving %s on %s (ALPN %s)\n", abs, l.Addr(), strings.Join(protos, ", "))
	fmt.Fprintf(stdout, "certificate SHA-256: %s\n", fp)
	if ready != nil {
		ready(l.Addr(), fp)
	}
	s := newFileServer(root, stderr, o.verbose)
	s.sockets = tr.SocketStats
	o.limits.apply(s.h3)
	if o.debugAddr != "" {
		stopDebug, err := startDebug(o.debugAddr, s, stdout)
		if err != nil {
			return err
		}
		defer stopDebug()
	}
	logCtx, stopLog := context.WithCancel(context.Background())
	read := func() limitStats { return readLimitStats(l, s.h3) }
	waitLog := logLimits(logCtx, read, stderr, limitsLogPeriod, o.verbose)
	err = s.acceptLoop(ctx, l)
	// The Listener's counters are read before it closes, which ends the
	// handshakes under way.
	final := read()
	_ = l.Close()
	s.shutdown(o.shutdownTimeout)
	stopLog()
	waitLog()
	final.h3 = s.h3.Stats()
	fmt.Fprintln(stdout, s.counters())
	fmt.Fprintln(stdout, listenerLine(final.quic))
	fmt.Fprintln(stdout, limitsLine(final.h3))
	if line := socketsLine(tr.SocketStats()); line != "" {
		fmt.Fprintln(stdout, line)
	}
	return err
}

// limitsLogPeriod is how often serve logs what its limits refused, if
// anything (every period with -v).
const limitsLogPeriod = 10 * time.Second

// serverCertificate loads --cert and --key, or makes a self-signed
// certificate for the listening host and the loopback names.
func serverCertificate(o *serveOptions) (tls.Certificate, error) {
	if o.certFile != "" {
		cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
		if err != nil {
			return cert, fmt.Errorf("%w: %v", errUsage, err)
		}
		return cert, nil
	}
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, _, err := net.SplitHostPort(o.addr); err == nil && h != "" && h != "localhost" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsUnspecified() {
			hosts = append(hosts, h)
		}
	}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	return hq.SelfSigned(hosts, time.Now())
}
