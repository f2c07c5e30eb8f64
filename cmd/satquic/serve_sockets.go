package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/satquic/satquic/quic"
)

// socketOptions are serve's flags for serving from many cores (one socket
// and reading goroutine each) and behind a QUIC-LB load balancer.
type socketOptions struct {
	sockets    int
	lbServerID string
	lbConfigID int
	lbNonceLen int
}

func (o *socketOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&o.sockets, "sockets", 1,
		"UDP sockets to serve from, bound to --addr with SO_REUSEPORT, each read by its own goroutine; datagrams are steered to the socket of their connection by a BPF program (Linux); 0 means one per CPU (GOMAXPROCS)")
	fs.StringVar(&o.lbServerID, "lb-server-id", "",
		"hex server ID (1 to 15 octets) to write into every connection ID in QUIC-LB's plaintext format, for a load balancer that routes by it")
	fs.IntVar(&o.lbConfigID, "lb-config-id", 0, "QUIC-LB config rotation codepoint, 0 to 6 (with --lb-server-id)")
	fs.IntVar(&o.lbNonceLen, "lb-nonce-len", 0, "QUIC-LB nonce length, 4 to 18 octets (default: 8-octet connection IDs, or a nonce of 4)")
}

// count is the number of sockets asked for.
func (o *socketOptions) count() int {
	if o.sockets == 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.sockets
}

// loadBalancer is the QUIC-LB configuration the flags give, or nil.
func (o *socketOptions) loadBalancer() (*quic.QUICLB, error) {
	if o.sockets < 0 || o.sockets > quic.MaxSockets {
		return nil, fmt.Errorf("%w: --sockets %d out of [0, %d]", errUsage, o.sockets, quic.MaxSockets)
	}
	if o.lbServerID == "" {
		if o.lbConfigID != 0 || o.lbNonceLen != 0 {
			return nil, fmt.Errorf("%w: --lb-config-id and --lb-nonce-len need --lb-server-id", errUsage)
		}
		return nil, nil
	}
	sid, err := hex.DecodeString(o.lbServerID)
	if err != nil {
		return nil, fmt.Errorf("%w: --lb-server-id: %v", errUsage, err)
	}
	if o.lbConfigID < 0 || o.lbConfigID > 6 {
		return nil, fmt.Errorf("%w: --lb-config-id %d out of [0, 6]", errUsage, o.lbConfigID)
	}
	return &quic.QUICLB{ConfigID: uint8(o.lbConfigID), ServerID: sid, NonceLength: o.lbNonceLen}, nil
}

// transport opens serve's Transport on addr.
func (o *socketOptions) transport(addr string) (*quic.Transport, error) {
	lb, err := o.loadBalancer()
	if err != nil {
		return nil, err
	}
	tr, err := quic.ListenMulti(addr, o.count())
	if err != nil {
		return nil, fmt.Errorf("%w: --addr: %v", errUsage, err)
	}
	tr.LoadBalancer = lb
	return tr, nil
}

// logSockets says, once the Transport has started, how many sockets serve
// and, if fewer than asked, why.
func (o *socketOptions) logSockets(tr *quic.Transport, stderr io.Writer) {
	if err := tr.SocketFallback(); err != nil {
		fmt.Fprintf(stderr, "serve: %d sockets asked for, serving from 1: %v\n", o.count(), err)
		return
	}
	if n := tr.Sockets(); n > 1 {
		fmt.Fprintf(stderr, "serve: %d sockets, steered by connection ID\n", n)
	}
}

// socketsLine sums up what each socket received, for the final report of
// a server with more than one.
func socketsLine(stats []quic.SocketStats) string {
	if len(stats) < 2 {
		return ""
	}
	parts := make([]string, len(stats))
	for i, s := range stats {
		parts[i] = fmt.Sprintf("%d: %d connections, %d datagrams, %d for another socket's connections", i, s.Connections, s.Datagrams, s.Foreign)
	}
	return "sockets " + strings.Join(parts, "; ")
}
