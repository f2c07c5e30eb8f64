package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// satquic tunnel server|client: an IP tunnel over CONNECT-IP (RFC 9484)
// on HTTP/3, with QUIC DATAGRAM frames and FEC, between TUN interfaces.
// The library is package gateway; this is its flags, its TUN devices, its
// statistics and its signals.

func init() {
	register(command{
		name:    "tunnel",
		summary: "an IP tunnel over HTTP/3 CONNECT-IP with FEC between TUN interfaces (server or client; Linux, root)",
		run:     runTunnel,
	})
}

const tunnelSynopsis = `tunnel server|client [flags]

"satquic tunnel server" accepts CONNECT-IP clients over HTTP/3 and joins
them to a TUN interface; "satquic tunnel client" connects to one and
routes traffic into its own TUN interface. Both need Linux and root (or
CAP_NET_ADMIN) for the TUN device. Run "satquic tunnel server --help" or
"satquic tunnel client --help" for the flags.`

func runTunnel(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "Usage: satquic %s\n", tunnelSynopsis)
		return fmt.Errorf("%w: tunnel needs server or client", errUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "server":
		return tunnelServer(ctx, args[1:], stdout, stderr, nil)
	case "client":
		return tunnelClient(ctx, args[1:], stdout, stderr, nil)
	case "-h", "-help", "--help":
		fmt.Fprintf(stderr, "Usage: satquic %s\n", tunnelSynopsis)
		return flag.ErrHelp
	}
	return fmt.Errorf("%w: tunnel %q: want server or client", errUsage, args[0])
}

// tunnelCommon are the flags both ends have besides the QUIC ones.
type tunnelCommon struct {
	dev       string
	mtu       int
	token     string
	tokenFile string
	// tokens are every token of --token-file, token the first.
	tokens   []string
	stats    time.Duration
	jsonFile string
	quic     quicOptions
}

func (o *tunnelCommon) register(fs *flag.FlagSet, mtu int, mtuUsage string) {
	fs.StringVar(&o.dev, "dev", "", "name of the TUN interface to create (default: the kernel's choice, tun0, ...)")
	fs.IntVar(&o.mtu, "mtu", mtu, mtuUsage)
	fs.StringVar(&o.token, "token", "", "bearer token that authenticates the client (RFC 6750)")
	fs.StringVar(&o.tokenFile, "token-file", "", "file of tokens, one a line (keeps them out of the process list): a client sends the first, a server admits each")
	fs.DurationVar(&o.stats, "stats", 0, "print a line of statistics this often (0: only at the end)")
	fs.StringVar(&o.jsonFile, "json", "", "write the final statistics as JSON to this file")
	o.quic.register(fs)
}

// check validates the common flags and reads the token file.
func (o *tunnelCommon) check() error {
	if o.mtu != 0 && (o.mtu < 1280 || o.mtu > 65535) {
		return fmt.Errorf("%w: --mtu %d: want 1280 to 65535 (1280 is IPv6's minimum, which the tunnel must carry)", errUsage, o.mtu)
	}
	if o.stats < 0 {
		return fmt.Errorf("%w: --stats must not be negative", errUsage)
	}
	if o.token != "" && o.tokenFile != "" {
		return fmt.Errorf("%w: --token and --token-file exclude each other", errUsage)
	}
	if o.tokenFile != "" {
		toks, err := readTokenFile(o.tokenFile)
		if err != nil {
			return err
		}
		o.token, o.tokens = toks[0], toks
	}
	if strings.ContainsAny(o.token, " \t\r\n") {
		return fmt.Errorf("%w: the token must not contain white space", errUsage)
	}
	return nil
}

// readTokenFile reads a token file: a token a line, blank lines and lines
// starting with # aside. A client sends the first; a server admits each,
// every one a client of its own for --max-tunnels-per-client.
func readTokenFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: --token-file: %v", errUsage, err)
	}
	var toks []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsFunc(line, unicode.IsSpace) {
			return nil, fmt.Errorf("%w: --token-file %s: line %d: a token must not contain white space", errUsage, path, i+1)
		}
		toks = append(toks, line)
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("%w: --token-file %s: no token in it", errUsage, path)
	}
	return toks, nil
}

// prefixList is a repeatable flag of IP prefixes, also separated by
// commas.
type prefixList []netip.Prefix

func (l *prefixList) String() string {
	s := make([]string, len(*l))
	for i, p := range *l {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func (l *prefixList) Set(v string) error {
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		p, err := netip.ParsePrefix(f)
		if err != nil {
			if a, aerr := netip.ParseAddr(f); aerr == nil {
				p = netip.PrefixFrom(a, a.BitLen())
			} else {
				return fmt.Errorf("%q is not an IP prefix such as 10.77.0.0/24 or fd77::/64", f)
			}
		}
		*l = append(*l, p.Masked())
	}
	return nil
}

// runWithStats calls line every period (if positive) until ctx ends, and
// returns a function that stops it.
func runWithStats(ctx context.Context, period time.Duration, w io.Writer, line func() string) (stop func()) {
	if period <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fmt.Fprintln(w, line())
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// tunErr explains why a TUN device could not be made.
func tunErr(err error) error {
	if _, serr := os.Stat("/dev/net/tun"); serr != nil {
		return fmt.Errorf("no /dev/net/tun (load the tun module: modprobe tun): %w", err)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("creating the TUN device needs root or CAP_NET_ADMIN: %w", err)
	}
	return fmt.Errorf("creating the TUN device: %w", err)
}
