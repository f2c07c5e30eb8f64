package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// satquic get: download over QUIC with HTTP/3 or hq-interop (HTTP/0.9),
// whichever the server picks, then report what the transfer took: time,
// goodput, handshake, round trips, losses.

func init() {
	register(command{
		name:    "get",
		summary: "download files over QUIC with HTTP/3 or hq-interop (HTTP/0.9) and report the transfer",
		run:     runGet,
	})
}

const getSynopsis = `get URL [URL...] [-o FILE|DIR] [--alpn h3,hq-interop] [--insecure | --pin SHA256] [--resume] [--json] [--timeout D] [QUIC flags]

URL is https://HOST[:PORT]/PATH (port 443 by default). The client offers
HTTP/3 (ALPN h3) and hq-interop (HTTP/0.9) and speaks the one the server
picks; --alpn offers only the one named. Over HTTP/3, any status but
200 OK is an error; over hq-interop, a stream reset is. Several URLs must
name the same server: they download at once, on one connection, into the
directory -o names (created if missing). One URL goes to -o FILE, or to
stdout without -o (with --json, the body is then discarded: stdout carries
the report). Each file is written beside its name and renamed into place
once it is complete: a failed download leaves no partial file and an
existing file of that name as it was. The summary goes to stderr, with progress while stderr is a
terminal (a bar and the time left when the server announced the sizes).

--resume downloads the first URL on a first connection and the others on
a second one, which resumes the first one's TLS session and sends its
requests in 0-RTT where the server allows it; with one URL, the second
connection fetches it again and discards the copy. The summary says how
the second connection went ("resumed, 0-RTT accepted").`

type getOptions struct {
	out      string
	alpn     string
	insecure bool
	pin      string
	jsonOut  bool
	timeout  time.Duration
	resume   bool
	quic     quicOptions
}

func runGet(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return get(ctx, args, stdout, stderr)
}

func get(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o getOptions
	fs := newFlagSet("get", getSynopsis, stderr)
	fs.StringVar(&o.out, "o", "", "output: a file, \"-\" for stdout, or a directory for several URLs")
	fs.StringVar(&o.alpn, "alpn", defaultALPN, "application protocols to offer, preferred first: h3, hq-interop, or both")
	fs.BoolVar(&o.insecure, "insecure", false, "do not verify the server's certificate")
	fs.StringVar(&o.pin, "pin", "", "trust exactly the certificate with this SHA-256 (as \"satquic serve\" prints it)")
	fs.BoolVar(&o.jsonOut, "json", false, "print the report as JSON on stdout")
	fs.DurationVar(&o.timeout, "timeout", 0, "give up after this long (0: never)")
	fs.BoolVar(&o.resume, "resume", false, "fetch the URLs after the first on a second connection that resumes the session, with 0-RTT")
	o.quic.register(fs)
	urls, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	server, files, err := parseGetURLs(urls)
	if err != nil {
		return err
	}
	tlsConf, err := o.tlsConfig(server)
	if err != nil {
		return err
	}
	sinks, err := o.openOutputs(files, stdout)
	if err != nil {
		return err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	conf := o.quic.config()
	// Tokens from NEW_TOKEN frames spare the second connection of
	// --resume a Retry.
	conf.TokenStore = quic.NewTokenCache(4)
	var rep *getReport
	if o.resume {
		rep, err = downloadResumed(ctx, server, files, sinks, tlsConf, conf, stderr)
	} else {
		rep, err = download(ctx, server, files, sinks, tlsConf, conf, false, stderr)
	}
	if rep == nil && err != nil && !o.insecure && o.pin == "" && strings.Contains(err.Error(), "certificate") {
		err = fmt.Errorf("%w (for a self-signed server, pass its SHA-256 with --pin)", err)
	}
	if cerr := closeOutputs(files, sinks); err == nil {
		err = cerr
	}
	if rep != nil {
		if o.jsonOut {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(rep); err == nil {
				err = jerr
			}
		} else {
			printGetReport(stderr, rep)
		}
	}
	return err
}

// parseInterspersed parses flags placed before, between or after the
// positional arguments, which it returns; errors follow parseFlags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlagsAllowArgs(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseFlagsAllowArgs is parseFlags without the rule against positional
// arguments.
func parseFlagsAllowArgs(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		usage()
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// parseGetURLs checks the URLs and returns their common server.
func parseGetURLs(urls []string) (string, []*getFile, error) {
	if len(urls) == 0 {
		return "", nil, fmt.Errorf("%w: no URL", errUsage)
	}
	var server string
	files := make([]*getFile, 0, len(urls))
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if u.Scheme != "https" || u.Host == "" {
			return "", nil, fmt.Errorf("%w: %q is not https://HOST[:PORT]/PATH", errUsage, raw)
		}
		port := u.Port()
		if port == "" {
			port = "443"
		}
		if err := checkHostPort(u.Hostname(), port); err != nil {
			return "", nil, fmt.Errorf("%w: %q: %v", errUsage, raw, err)
		}
		hostport := net.JoinHostPort(u.Hostname(), port)
		if server != "" && hostport != server {
			return "", nil, fmt.Errorf("%w: the URLs name two servers, %s and %s", errUsage, server, hostport)
		}
		server = hostport
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		if u.RawQuery != "" {
			p += "?" + u.RawQuery
		}
		files = append(files, &getFile{URL: raw, path: p})
	}
	return server, files, nil
}

func (o *getOptions) tlsConfig(server string) (*tls.Config, error) {
	protos, err := parseALPN(o.alpn)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(server)
	conf := &tls.Config{ServerName: host, NextProtos: protos}
	if o.resume {
		conf.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	}
	switch {
	case o.insecure && o.pin != "":
		return nil, fmt.Errorf("%w: --insecure and --pin exclude each other", errUsage)
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
	}
	return conf, nil
}

// checkHostPort accepts what a URL may name as its server: an IP address
// (in brackets in the URL) or a DNS name, and a port from 1 to 65535.
// url.Parse lets through hosts such as "]" that no resolver would.
func checkHostPort(host, port string) error {
	if p, err := strconv.ParseUint(port, 10, 16); err != nil || p == 0 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	if len(host) == 0 || len(host) > 253 {
		return fmt.Errorf("host %q is not a name or an IP address", host)
	}
	for _, label := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if len(label) == 0 || len(label) > 63 || strings.ContainsFunc(label, notHostChar) {
			return fmt.Errorf("host %q is not a name or an IP address", host)
		}
	}
	return nil
}

// notHostChar reports a character no DNS name of a URL holds (RFC 1123
// section 2.1 letters, digits and hyphens; underscores are seen in the
// wild).
func notHostChar(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
}
