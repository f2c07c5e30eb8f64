package gateway

import (
	"crypto/sha256"
	"net/netip"
	"sync"
)

// The defaults of a Server's bounds on the tunnels one client holds.
// Every tunnel holds one address of each IP version of the pool, so that
// without them one holder of a valid credential could take the whole pool
// (253 addresses of the default /24) and lock everyone else out.
const (
	// DefaultMaxTunnelsPerClient bounds the tunnels open at once with
	// one credential (a token, or a client certificate): a client with
	// one connection per core, and room for the tunnels of a client that
	// restarted while its old ones wait for their idle timeout.
	DefaultMaxTunnelsPerClient = 8
	// DefaultMaxTunnelsPerSource bounds the tunnels open at once from
	// one source (an IPv4 address or an IPv6 /64, whatever its ports, as
	// the QUIC listener counts sources): room for many clients behind
	// one carrier-grade NAT, as satellite operators run, and still a
	// quarter of the default pool at most.
	DefaultMaxTunnelsPerSource = 64
	// DefaultMaxConnectionsPerSource is the QUIC connections a tunnel
	// server holds from one source (the QUIC configuration's
	// MaxConnectionsPerIP, when it sets none): room for a tunnel on each
	// connection up to DefaultMaxTunnelsPerSource and as many again
	// opening or refused, where the QUIC default of 512 suits a web
	// server. Each connection holds about a dozen goroutines and its
	// buffers whether or not it opens a tunnel.
	DefaultMaxConnectionsPerSource = 2 * DefaultMaxTunnelsPerSource
	// DefaultMaxStreamsPerConn is the request streams a client may have
	// under way on one connection of a tunnel server (the QUIC
	// configuration's MaxIncomingStreams, when it sets none): a tunnel
	// client needs one; the rest is room for refused requests in flight.
	DefaultMaxStreamsPerConn = 16
)

// limitOrDefault maps a limit's zero to def and a negative one to 0, no
// limit.
func limitOrDefault(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// limitKind names the bound a tunnel request ran into.
type limitKind int

const (
	withinLimits limitKind = iota
	clientLimit
	sourceLimit
)

// tunnelCounts counts the open tunnels of each client identity and
// each source, against the Server's bounds (0: no bound).
type tunnelCounts struct {
	perClient, perSource int

	mu      sync.Mutex
	clients map[identity]int
	sources map[netip.Prefix]int
}

// identity is what a client proved: the SHA-256 of the token it showed,
// or of the certificate it presented, so that neither is kept in memory
// longer than the request.
type identity [sha256.Size + 1]byte

func tokenIdentity(token string) identity {
	var id identity
	id[0] = 't'
	h := sha256.Sum256([]byte(token))
	copy(id[1:], h[:])
	return id
}

func certIdentity(raw []byte) identity {
	var id identity
	id[0] = 'c'
	h := sha256.Sum256(raw)
	copy(id[1:], h[:])
	return id
}

func newTunnelCounts(perClient, perSource int) *tunnelCounts {
	return &tunnelCounts{
		perClient: perClient, perSource: perSource,
		clients: make(map[identity]int), sources: make(map[netip.Prefix]int),
	}
}

// take counts one more tunnel of id from src (src invalid: a source the
// server could not tell, not bounded), unless that goes beyond a bound,
// which it then names.
func (tc *tunnelCounts) take(id identity, src netip.Prefix) limitKind {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.perClient > 0 && tc.clients[id] >= tc.perClient {
		return clientLimit
	}
	if src.IsValid() && tc.perSource > 0 && tc.sources[src] >= tc.perSource {
		return sourceLimit
	}
	tc.clients[id]++
	if src.IsValid() {
		tc.sources[src]++
	}
	return withinLimits
}

// give takes back a tunnel that take counted.
func (tc *tunnelCounts) give(id identity, src netip.Prefix) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.clients[id]--; tc.clients[id] <= 0 {
		delete(tc.clients, id)
	}
	if !src.IsValid() {
		return
	}
	if tc.sources[src]--; tc.sources[src] <= 0 {
		delete(tc.sources, src)
	}
}

// open is the number of tunnels counted.
func (tc *tunnelCounts) open() int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	n := 0
	for _, c := range tc.clients {
		n += c
	}
	return n
}

// sourceOf is the source a request came from, as the QUIC listener
// counts them: the IPv4 address, or the IPv6 /64 (one subscriber's
// prefix, RFC 6177), whatever the port. An address it cannot parse gives
// an invalid prefix.
func sourceOf(remoteAddr string) netip.Prefix {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return netip.Prefix{}
	}
	a := ap.Addr().Unmap()
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.WithZone("").Prefix(64)
	return p
}
