//go:build linux

package interop

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
)

// Role is the side an implementation plays in a connection.
type Role int

// The roles.
const (
	Client Role = iota
	Server
)

func (r Role) String() string {
	if r == Client {
		return "client"
	}
	return "server"
}

// Implementation is a QUIC stack the matrix runs: satquic itself, or a
// peer. Like an image of the interop runner, it is told a test and the
// files, and answers for tests it cannot run (errUnsupported).
type Implementation interface {
	Name() string
	// Unsupported says why the implementation cannot run test in role,
	// or returns "" when it can.
	Unsupported(role Role, test string) string
	// Protocols are the application protocols it speaks, preferred
	// first: hq-interop (what the runner's tests use) and h3.
	Protocols() []string
	// Prepare makes it ready (builds or finds its programs); an error
	// says why none of its tests can run.
	Prepare(ctx context.Context, work string) error
	// StartServer starts a server, which serves until stopped.
	StartServer(ctx context.Context, j *serverJob) (server, error)
	// RunClient runs the client's side of a test to its end.
	RunClient(ctx context.Context, j *clientJob) error
}

// Application protocols.
const (
	protoHQ = "hq-interop"
	protoH3 = "h3"
)

// host is where an endpoint runs: this machine's loopback, or a network
// namespace of the emulator.
type host struct {
	// addr is the address endpoints on the host bind to.
	addr netip.Addr
	// command returns a command that runs on the host.
	command func(name string, args ...string) *exec.Cmd
	// listenUDP opens a UDP socket on the host.
	listenUDP func(addr netip.AddrPort) (*net.UDPConn, error)
}

// loopback is this machine, on 127.0.0.1 or ::1.
func loopback(ipv6 bool) host {
	addr := netip.MustParseAddr("127.0.0.1")
	if ipv6 {
		addr = netip.IPv6Loopback()
	}
	return host{
		addr:    addr,
		command: exec.Command,
		listenUDP: func(a netip.AddrPort) (*net.UDPConn, error) {
			return net.ListenUDP("udp", net.UDPAddrFromAddrPort(a))
		},
	}
}

// serverJob is what a server is asked to do.
type serverJob struct {
	test  string
	proto string
	host  host
	// port is the port to listen on (0: any free one).
	port uint16
	www  string
	cert *certificate
	// keyLog is the file the server writes its TLS secrets to, and logs
	// the directory of its output.
	keyLog, logs string
}

// server is a running server.
type server interface {
	// addr is where it listens.
	addr() netip.AddrPort
	// stop stops it, and reports any way it failed while it ran.
	stop() error
}

// clientJob is what a client is asked to do.
type clientJob struct {
	test  string
	proto string
	host  host
	// server is where to send the requests; urls are the files to fetch,
	// https://server/NAME.
	server netip.AddrPort
	urls   []string
	// download is the directory the files go to, under their names.
	download     string
	keyLog, logs string
}

// fileURL is the URL of a file of the server at addr.
func fileURL(addr netip.AddrPort, name string) string {
	return "https://" + addr.String() + "/" + name
}

// Implementations are the stacks the matrix knows: satquic first, then
// its peers.
func Implementations() []Implementation {
	return []Implementation{&satquicImpl{}, &quicgoImpl{}, &ngtcp2Impl{}}
}

// LookupImplementations parses a comma-separated list of implementation
// names ("all" for every one); satquic is always among those returned,
// first.
func LookupImplementations(list string) ([]Implementation, error) {
	all := Implementations()
	if list == "" || list == "all" {
		return all, nil
	}
	out := []Implementation{all[0]}
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(im Implementation) bool { return im.Name() == name })
		if i < 0 {
			var names []string
			for _, im := range all {
				names = append(names, im.Name())
			}
			return nil, fmt.Errorf("unknown implementation %q (known: %s)", name, strings.Join(names, ", "))
		}
		if !slices.Contains(out, all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// protocolFor picks the application protocol of a pair for a case:
// HTTP/3 for http3, else hq-interop as the runner's tests use it,
// unless one of the two speaks only HTTP/3.
func protocolFor(c *Case, client, server Implementation) (string, bool) {
	if c.ClientTest == testHTTP3 {
		return protoH3, slices.Contains(client.Protocols(), protoH3) && slices.Contains(server.Protocols(), protoH3)
	}
	for _, p := range []string{protoHQ, protoH3} {
		if slices.Contains(client.Protocols(), p) && slices.Contains(server.Protocols(), p) {
			return p, true
		}
	}
	return "", false
}
