package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/satquic/satquic/gateway"
	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

const tunnelServerSynopsis = `tunnel server [--listen HOST:PORT] [--pool PREFIX]... [--route PREFIX]... (--token T | --token-file FILE | --client-ca FILE) [--cert FILE --key FILE] [--dev NAME] [--mtu N] [--max-tunnels-per-client N] [--max-tunnels-per-source N] [--max-conns-per-ip N]... [--reset-key FILE] [--token-key FILE] [--stats D] [--json FILE] [--config FILE] [QUIC flags]

Accepts CONNECT-IP (RFC 9484) clients over HTTP/3 on --listen and joins
them to a TUN interface it creates (Linux; root or CAP_NET_ADMIN). Each
client is admitted by its bearer token (--token or --token-file) or by a
client certificate issued by --client-ca, and gets one address of each IP
version of --pool (default 10.77.0.0/24; repeat the flag or separate with
commas for IPv6, e.g. --pool 10.77.0.0/24,fd77::/64). The first address of
each pool prefix is the server's own, on the TUN interface. Clients are
told they may send to --route (default: the pool, so they reach the
server and each other; --route 0.0.0.0/0 makes the server their gateway
to everything). Packets from a client whose source is not its address
are dropped and counted.

Each token of --token-file (one a line) and each client certificate is a
client of its own, with at most --max-tunnels-per-client tunnels at once
(default 8); one IPv4 address or IPv6 /64 has at most
--max-tunnels-per-source (default 64). A request beyond either is answered
429 Too Many Requests, one beyond the pool 503, one from a client that did
not enable HTTP datagrams (which carry the packets) 400, and the statistics
count them. --max-handshakes, --max-handshakes-per-ip, --max-conns and
--max-conns-per-ip bound the QUIC connections as for "satquic serve".

The server forwards between the tunnel and its other interfaces only if
the kernel does: it neither enables IP forwarding nor sets up NAT (see
README, "Tunnel"). FEC is offered (policy auto) unless --no-fec; it runs
with clients that offer it too. Without --cert and --key a self-signed
certificate is made and its SHA-256 printed, for the client's --pin.

--reset-key FILE keeps the key of the stateless resets (RFC 9000 section
10.3) across restarts: after one, the clients' next packets are answered
with resets they recognise, and they reconnect at once instead of waiting
for their idle timeout; --token-key FILE keeps the address validation
tokens it gave valid, so that the clients coming back present theirs and
get neither a Retry nor the anti-amplification limit (RFC 9000 section
8.1). Each is a file of 64 hex digits (openssl rand -hex 32).

--config FILE reads a JSON object whose keys are these flags' names
(without dashes): {"listen": ":4433", "pool": ["10.77.0.0/24"],
"token-file": "/etc/satquic/token", "stats": "10s"}; flags given on the
command line override it. On SIGINT or SIGTERM the tunnels close, the TUN
interface is removed, and the final statistics are printed.`

type tunnelServerOptions struct {
	tunnelCommon
	listen   string
	pool     prefixList
	routes   prefixList
	clientCA string
	certFile string
	keyFile  string
	config   string
	// maxPerClient and maxPerSource bound the tunnels of one credential
	// and of one source (0: no bound).
	maxPerClient int
	maxPerSource int
	limits       serveLimits
	keyFiles     serverKeyFiles
}

// defaultTunnelPool is the pool when --pool is not given.
var defaultTunnelPool = netip.MustParsePrefix("10.77.0.0/24")

// tunnelServerFlags parses and checks the server's flags and config file.
func tunnelServerFlags(args []string, stderr io.Writer) (*tunnelServerOptions, error) {
	o := &tunnelServerOptions{}
	fs := newFlagSet("tunnel server", tunnelServerSynopsis, stderr)
	fs.StringVar(&o.listen, "listen", ":4433", "UDP address to listen on")
	fs.Var(&o.pool, "pool", "prefix of the clients' addresses, repeatable (default 10.77.0.0/24)")
	fs.Var(&o.routes, "route", "destination prefix clients may send to, repeatable (default: the pool)")
	fs.StringVar(&o.clientCA, "client-ca", "", "PEM certificates of the authority whose client certificates are admitted")
	fs.StringVar(&o.certFile, "cert", "", "PEM certificate chain (with --key); default: a self-signed certificate")
	fs.StringVar(&o.keyFile, "key", "", "PEM private key of --cert")
	fs.StringVar(&o.config, "config", "", "JSON file of flag values (keys are flag names; the command line overrides it)")
	fs.IntVar(&o.maxPerClient, "max-tunnels-per-client", gateway.DefaultMaxTunnelsPerClient,
		"tunnels open at once with one token or client certificate (0: no bound); beyond, 429")
	fs.IntVar(&o.maxPerSource, "max-tunnels-per-source", gateway.DefaultMaxTunnelsPerSource,
		"tunnels open at once from one IPv4 address or IPv6 /64, whatever its ports (0: no bound); beyond, 429")
	o.limits.registerWith(fs, gateway.DefaultMaxConnectionsPerSource)
	o.keyFiles.register(fs)
	o.register(fs, 1400, "MTU of the TUN interface and the largest packet sent to a client")
	if err := parseTunnelFlags(fs, args, &o.config, o.check); err != nil {
		return nil, err
	}
	return o, nil
}

// check validates the server's flags.
func (o *tunnelServerOptions) check() error {
	if err := o.tunnelCommon.check(); err != nil {
		return err
	}
	if o.mtu == 0 {
		return fmt.Errorf("%w: --mtu must be set for the server", errUsage)
	}
	if len(o.pool) == 0 {
		o.pool = prefixList{defaultTunnelPool}
	}
	for _, p := range o.pool {
		if p.Addr().BitLen()-p.Bits() < 2 {
			return fmt.Errorf("%w: --pool %v: too small, the server takes its first address and clients need more", errUsage, p)
		}
	}
	if o.token == "" && o.clientCA == "" {
		return fmt.Errorf("%w: the server needs --token, --token-file or --client-ca, so that only your clients can open tunnels", errUsage)
	}
	if o.maxPerClient < 0 || o.maxPerSource < 0 {
		return fmt.Errorf("%w: --max-tunnels-per-client and --max-tunnels-per-source must not be negative", errUsage)
	}
	if err := o.limits.apply(&quic.Config{}); err != nil {
		return err
	}
	if (o.certFile == "") != (o.keyFile == "") {
		return fmt.Errorf("%w: --cert and --key go together", errUsage)
	}
	if _, err := net.ResolveUDPAddr("udp", o.listen); err != nil {
		return fmt.Errorf("%w: --listen: %v", errUsage, err)
	}
	return nil
}

// localAddrs are the server's own addresses, the first of each pool
// prefix, as the TUN interface's addresses with the pool's length.
func (o *tunnelServerOptions) localAddrs() ([]netip.Addr, []netip.Prefix) {
	var addrs []netip.Addr
	var ifAddrs []netip.Prefix
	for _, p := range o.pool {
		a := p.Addr().Next()
		addrs = append(addrs, a)
		ifAddrs = append(ifAddrs, netip.PrefixFrom(a, p.Bits()))
	}
	return addrs, ifAddrs
}

// tlsConfig is the server's TLS configuration, with the client
// certificate checks of --client-ca, and the certificate's fingerprint.
func (o *tunnelServerOptions) tlsConfig() (*tls.Config, string, error) {
	cert, err := serverCertificate(&serveOptions{addr: o.listen, certFile: o.certFile, keyFile: o.keyFile})
	if err != nil {
		return nil, "", err
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}}
	if o.clientCA != "" {
		pem, err := os.ReadFile(o.clientCA)
		if err != nil {
			return nil, "", fmt.Errorf("%w: --client-ca: %v", errUsage, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, "", fmt.Errorf("%w: --client-ca %s: no PEM certificate", errUsage, o.clientCA)
		}
		conf.ClientCAs = pool
		// With a token as well, a client may come without a certificate;
		// one it shows must verify.
		conf.ClientAuth = tls.RequireAndVerifyClientCert
		if o.token != "" {
			conf.ClientAuth = tls.VerifyClientCertIfGiven
		}
	}
	return conf, hq.Fingerprint(cert.Certificate[0]), nil
}

// tunnelServer runs the server until ctx ends; ready, if set, learns the
// listening address, the certificate's fingerprint and the interface's
// name once it listens.
func tunnelServer(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(addr net.Addr, fingerprint, dev string)) error {
	o, err := tunnelServerFlags(args, stderr)
	if err != nil {
		return err
	}
	resetKey, tokenKey, err := o.keyFiles.read()
	if err != nil {
		return err
	}
	tlsConf, fp, err := o.tlsConfig()
	if err != nil {
		return err
	}
	if err := checkTUNAccess(); err != nil {
		return err
	}
	pc, err := net.ListenPacket("udp", o.listen)
	if err != nil {
		return fmt.Errorf("%w: --listen: %v", errUsage, err)
	}
	local, ifAddrs := o.localAddrs()
	dev, name, err := openTUN(o.dev, o.mtu, ifAddrs, nil)
	if err != nil {
		_ = pc.Close()
		return err
	}
	cfg := o.serverConfig(local, stderr)
	cfg.StatelessResetKey, cfg.TokenKey = resetKey, tokenKey
	srv, err := gateway.NewServer(dev, cfg)
	if err != nil {
		_ = pc.Close()
		_ = dev.Close()
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	routes := o.routes
	if len(routes) == 0 {
		routes = o.pool
	}
	fmt.Fprintf(stdout, "tunnel server on %s, interface %s (%s, MTU %d), pool %s, routes %s\n",
		pc.LocalAddr(), name, prefixesText(ifAddrs), o.mtu, o.pool.String(), routes.String())
	fmt.Fprintf(stdout, "certificate SHA-256: %s\n", fp)
	line := func() string {
		st := srv.Stats()
		return tunnelLine(st.Tunnel, st.Sessions, st.Transport, fmt.Sprintf("clients %d, refused %d, over-limit client %d source %d, pool-exhausted %d, no-client %d, path-too-small %d",
			st.Clients, st.Refused, st.OverClientLimit, st.OverSourceLimit, st.PoolExhausted, st.NoClient, st.PathTooSmall))
	}
	stopStats := runWithStats(ctx, o.stats, stdout, line)
	qconf := o.quic.config()
	_ = o.limits.apply(qconf) // checked with the flags
	err = srv.Serve(ctx, pc, tlsConf, qconf, func(a net.Addr) {
		if ready != nil {
			ready(a, fp, name)
		}
	})
	stopStats()
	fmt.Fprintln(stdout, line())
	if jerr := writeTunnelJSON(o.jsonFile, srv.Stats()); jerr != nil && err == nil {
		err = jerr
	}
	return err
}

// serverConfig is the gateway's configuration from the flags.
func (o *tunnelServerOptions) serverConfig(local []netip.Addr, stderr io.Writer) gateway.ServerConfig {
	cfg := gateway.ServerConfig{
		ClientCertificates: o.clientCA != "",
		Pool:               o.pool, Local: local, Routes: o.routes, MTU: o.mtu,
		MaxTunnelsPerClient: noBoundIfZero(o.maxPerClient),
		MaxTunnelsPerSource: noBoundIfZero(o.maxPerSource),
		ErrorLog:            log.New(stderr, "", log.LstdFlags),
	}
	if o.tokens != nil {
		cfg.Tokens = o.tokens
	} else {
		cfg.Token = o.token
	}
	return cfg
}

// noBoundIfZero maps a flag's 0, no bound, to the gateway's -1.
func noBoundIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// prefixesText lists prefixes, separated by commas.
func prefixesText(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
