package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/gateway"
	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel"
)

const tunnelClientSynopsis = `tunnel client --server https://HOST:PORT [--token T | --token-file FILE] [--cert FILE --key FILE] [--insecure | --pin SHA256 | --ca FILE] [--route PREFIX]... [--dev NAME] [--mtu N] [--no-reconnect] [--stats D] [--json FILE] [--config FILE] [QUIC flags]

Connects to a "satquic tunnel server" (or any CONNECT-IP proxy, RFC 9484)
over HTTP/3 and creates a TUN interface (Linux; root or CAP_NET_ADMIN)
with the address the server assigns and routes to what it advertises,
restricted to --route when given. A route that covers the server's own
address leaves that address out, so that the tunnel's packets do not loop
into it. The interface's MTU is what one QUIC datagram carries on the
path once path MTU discovery ran, at least 1280 (else the client fails),
at most --mtu. FEC is offered (policy auto) unless --no-fec.

The server's certificate is verified with the system's roots, --ca, or
--pin (the SHA-256 a self-signed server prints); --insecure skips it.
--cert and --key present a client certificate to a server that admits
clients by certificate. --config FILE reads a JSON object whose keys are
these flags' names; flags on the command line override it. On SIGINT or
SIGTERM the tunnel closes, the TUN interface is removed and the final
statistics are printed.

The first connection fails at once with its error. When a tunnel that was
up is lost (server restart, outage, NAT rebinding), the client keeps its
interface and routes, drops what they carry meanwhile, and reconnects:
waits of 1 s doubling to 30 s (with jitter; none before the first attempt
when a stateless reset ended a session of more than 30 s: the server
restarted and is up), each attempt reported on
stderr, until SIGINT or SIGTERM; a new address, routes or smaller MTU
from the server reconfigure the interface. --no-reconnect exits instead.
A reconnection presents the address validation token the server gave
(NEW_TOKEN), which a server restarted with the same --token-key takes as
proof of the client's address: no Retry, no anti-amplification limit.`

type tunnelClientOptions struct {
	tunnelCommon
	server   string
	routes   prefixList
	insecure bool
	pin      string
	ca       string
	certFile string
	keyFile  string
	config   string

	noReconnect bool
}

// tunnelClientFlags parses and checks the client's flags and config file.
func tunnelClientFlags(args []string, stderr io.Writer) (*tunnelClientOptions, error) {
	o := &tunnelClientOptions{}
	fs := newFlagSet("tunnel client", tunnelClientSynopsis, stderr)
	fs.StringVar(&o.server, "server", "", "URL of the tunnel server, https://host:port (required)")
	fs.Var(&o.routes, "route", "send only these destinations through the tunnel, repeatable (default: all the server advertises)")
	fs.BoolVar(&o.insecure, "insecure", false, "do not verify the server's certificate")
	fs.StringVar(&o.pin, "pin", "", "trust exactly the certificate with this SHA-256 (as the server prints it)")
	fs.StringVar(&o.ca, "ca", "", "PEM certificates of the authority that issued the server's certificate")
	fs.StringVar(&o.certFile, "cert", "", "PEM client certificate chain (with --key)")
	fs.StringVar(&o.keyFile, "key", "", "PEM private key of --cert")
	fs.StringVar(&o.config, "config", "", "JSON file of flag values (keys are flag names; the command line overrides it)")
	fs.BoolVar(&o.noReconnect, "no-reconnect", false, "exit when the tunnel ends instead of reconnecting")
	o.register(fs, 0, "cap on the inner MTU (0: what the path carries; at least 1280)")
	if err := parseTunnelFlags(fs, args, &o.config, o.check); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *tunnelClientOptions) check() error {
	if err := o.tunnelCommon.check(); err != nil {
		return err
	}
	if o.server == "" {
		return fmt.Errorf("%w: --server is required", errUsage)
	}
	n := 0
	for _, set := range []bool{o.insecure, o.pin != "", o.ca != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("%w: --insecure, --pin and --ca exclude each other", errUsage)
	}
	if (o.certFile == "") != (o.keyFile == "") {
		return fmt.Errorf("%w: --cert and --key go together", errUsage)
	}
	if o.token == "" && o.certFile == "" {
		return fmt.Errorf("%w: the client needs --token, --token-file or --cert, which the server admits", errUsage)
	}
	return nil
}

// tlsConfig is the client's TLS configuration.
func (o *tunnelClientOptions) tlsConfig() (*tls.Config, error) {
	conf := &tls.Config{}
	switch {
	case o.insecure:
		conf.InsecureSkipVerify = true
	case o.pin != "":
		pin, err := hq.ParsePin(o.pin)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		// The pin replaces the chain of trust and the name check.
		conf.InsecureSkipVerify = true
		conf.VerifyPeerCertificate = hq.VerifyPin(pin)
	case o.ca != "":
		pem, err := os.ReadFile(o.ca)
		if err != nil {
			return nil, fmt.Errorf("%w: --ca: %v", errUsage, err)
		}
		conf.RootCAs = x509.NewCertPool()
		if !conf.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: --ca %s: no PEM certificate", errUsage, o.ca)
		}
	}
	if o.certFile != "" {
		cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --cert: %v", errUsage, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	return conf, nil
}

// dialer opens the client's tunnels. They share the token store tokens,
// so that a redial presents the token the server gave the tunnel before in a
// NEW_TOKEN frame (RFC 9000 section 8.1.3): a server restarted with its
// --token-key takes it as proof of the client's address, so that the
// clients coming back at once after the restart are not held to the
// anti-amplification limit nor sent a Retry.
func (o *tunnelClientOptions) dialer(tlsConf *tls.Config, tokens quic.TokenStore) func(context.Context) (*gateway.ClientTunnel, error) {
	qconf := o.quic.config()
	qconf.TokenStore = tokens
	opts := gateway.DialOptions{Token: o.token, TLSConfig: tlsConf, QUIC: qconf, MTU: o.mtu}
	return func(ctx context.Context) (*gateway.ClientTunnel, error) { return gateway.Dial(ctx, o.server, opts) }
}

// tunnelClient runs the client until ctx ends or, with --no-reconnect,
// the tunnel does; ready, if set, learns the interface's name and the
// first tunnel once it runs.
func tunnelClient(ctx context.Context, args []string, stdout, stderr io.Writer, ready func(dev string, ct *gateway.ClientTunnel)) error {
	o, err := tunnelClientFlags(args, stderr)
	if err != nil {
		return err
	}
	tlsConf, err := o.tlsConfig()
	if err != nil {
		return err
	}
	if err := checkTUNAccess(); err != nil {
		return err
	}
	dial := o.dialer(tlsConf, quic.NewTokenCache(1))
	// The first dial fails at once: a misconfiguration shows now.
	ct, err := dial(ctx)
	if err != nil {
		return err
	}
	cur := &clientConn{ct: ct}
	defer func() { _ = cur.get().Close() }()
	setup, skipped := o.setupFor(ct, 0)
	for _, r := range skipped {
		fmt.Fprintf(stderr, "satquic tunnel client: --route %v is not among the server's routes; not installed\n", r)
	}
	dev, name, err := openTUN(o.dev, setup.mtu, setup.addrs, setup.routes)
	if err != nil {
		return err
	}
	cur.setup = setup
	fmt.Fprintf(stdout, "tunnel to %s: interface %s (%s, MTU %d), routes %s\n", ct.RemoteAddr(), name, prefixesText(setup.addrs), setup.mtu, prefixesText(setup.routes))
	// The client's one session carries only this host's packets: its
	// device is held back rather than its packets dropped when the tunnel
	// is full.
	cfg := tunnel.Config{WaitWhenFull: true}
	var rd *redialer[*gateway.ClientTunnel]
	if !o.noReconnect {
		rd = newRedialer(dial, stderr, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())))
		cfg.NextSession = func(ctx context.Context, lost error) (tunnel.Session, error) {
			_ = cur.get().Close()
			ct, err := rd.redial(ctx, lost)
			if err != nil {
				return nil, err
			}
			if err := cur.adopt(ct, o, dev, name, stderr); err != nil {
				_ = ct.Close()
				return nil, err
			}
			return ct.Session, nil
		}
	}
	fwd := tunnel.New(dev, ct.Session, cfg)
	line := func() string {
		ct, st := cur.get(), fwd.Stats()
		return tunnelLine(st, ct.Session.Stats(), ct.TransportStats(), fmt.Sprintf("path-too-small %d", ct.PathTooSmall()), reconnectsText(rd, st))
	}
	stopStats := runWithStats(ctx, o.stats, stdout, line)
	if ready != nil {
		ready(name, ct)
	}
	err = fwd.Run(ctx)
	stopStats()
	fmt.Fprintln(stdout, line())
	if err != nil {
		err = fmt.Errorf("the tunnel ended: %w", err)
	}
	if jerr := writeTunnelJSON(o.jsonFile, clientFinal(cur, fwd, rd)); jerr != nil && err == nil {
		err = jerr
	}
	return err
}

// setupFor is the configuration of the TUN interface for the tunnel ct:
// its assigned prefixes, its MTU (at most maxMTU when that is not zero)
// and the routes to install (see clientRoutes).
func (o *tunnelClientOptions) setupFor(ct *gateway.ClientTunnel, maxMTU int) (s tunSetup, skipped []netip.Prefix) {
	s.mtu, s.addrs = ct.MTU, ct.Prefixes
	if maxMTU > 0 {
		s.mtu = min(s.mtu, maxMTU)
	}
	s.routes, skipped = clientRoutes(ct.Routes, o.routes, remoteIP(ct.RemoteAddr()))
	return s, skipped
}

// remoteIP is the IP address of a UDP address.
func remoteIP(a net.Addr) netip.Addr {
	if u, ok := a.(*net.UDPAddr); ok {
		ip, _ := netip.AddrFromSlice(u.IP)
		return ip.Unmap()
	}
	return netip.Addr{}
}

// clientRoutes are the prefixes to route into the tunnel: the advertised
// routes, narrowed to want when it is not empty (skipped lists the
// wanted prefixes no advertised route covers), with server's address
// left out.
func clientRoutes(advertised []connectip.IPRoute, want []netip.Prefix, server netip.Addr) (routes, skipped []netip.Prefix) {
	var adv []netip.Prefix
	for _, r := range advertised {
		adv = append(adv, r.RangePrefixes()...)
	}
	if len(want) == 0 {
		routes = adv
	} else {
		for _, w := range want {
			covered := false
			for _, a := range adv {
				switch {
				case a.Bits() <= w.Bits() && a.Contains(w.Addr()):
					routes, covered = append(routes, w), true
				case w.Bits() < a.Bits() && w.Contains(a.Addr()):
					routes, covered = append(routes, a), true
				}
			}
			if !covered {
				skipped = append(skipped, w)
			}
		}
	}
	var out []netip.Prefix
	for _, p := range routes {
		out = append(out, excludeAddr(p, server)...)
	}
	return out, skipped
}

// excludeAddr returns the prefixes that cover p except a: p itself when
// a is outside it, otherwise, for each length below a's full length, the
// half that does not hold a (at most 32 prefixes for IPv4, 128 for IPv6).
func excludeAddr(p netip.Prefix, a netip.Addr) []netip.Prefix {
	if !a.IsValid() || !p.Contains(a) {
		return []netip.Prefix{p}
	}
	var out []netip.Prefix
	b := a.AsSlice()
	for l := p.Bits() + 1; l <= a.BitLen(); l++ {
		sib := append([]byte(nil), b...)
		sib[(l-1)/8] ^= 0x80 >> ((l - 1) % 8)
		s, _ := netip.AddrFromSlice(sib)
		out = append(out, netip.PrefixFrom(s, l).Masked())
	}
	return out
}
