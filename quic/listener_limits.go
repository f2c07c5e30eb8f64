package quic

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// Defaults of the server limits (Config.MaxHandshakes and the others),
// from what a connection costs (TestServerCostPerConnection): a handshake
// about 38 KiB and two goroutines (its own and crypto/tls's) in its first
// second, 31 KiB and crypto/tls's goroutine after, an
// established idle connection about 46 KiB and one goroutine, besides the
// application's; FEC's decoder adds about 48 KiB to either. Streams in use
// add their buffers, which flow control bounds.
const (
	// DefaultMaxHandshakes is far above what legitimate clients need at
	// once (a handshake lasts a few round trips) and holds 38 MiB at
	// most, or 85 MiB with FEC.
	DefaultMaxHandshakes = 1024
	// DefaultMaxHandshakesPerIP leaves room for the clients behind one
	// carrier-grade NAT, common on satellite access, while one source
	// takes 1/32 of the handshakes, or 1/16 counting those without a
	// token, however many sockets it has.
	DefaultMaxHandshakesPerIP = 32
	// DefaultMaxConnections holds about 190 MiB when every connection is
	// idle, 400 MiB with FEC.
	DefaultMaxConnections = 4096
	// DefaultMaxConnectionsPerIP lets a NAT carry many users, and keeps
	// one source to an eighth of the connections.
	DefaultMaxConnectionsPerIP = 512
	// DefaultMaxUnvalidatedHandshakes is the handshakes with clients
	// whose address is not validated (forged Initials among them) a
	// server holds before it asks new ones to prove their address with
	// a Retry: 4.4 MiB of handshakes.
	DefaultMaxUnvalidatedHandshakes = 128
)

// serverLimits are a Listener's limits, defaults filled in.
type serverLimits struct {
	handshakes, handshakesPerIP int
	conns, connsPerIP           int
	// unvalidated bounds the handshakes with unvalidated clients,
	// beyond which they get a Retry.
	unvalidated int
	// handshakeSilence is how long a handshake must have been silent
	// before a new client may replace it: a probe timeout before the
	// first RTT sample (about 3 InitialRTTs, RFC 9002 section 6.2.1), in
	// which a client still trying sends again.
	handshakeSilence time.Duration
	// idleEviction is how long a connection must have received nothing
	// before a new client may replace it: half the idle timeout, the
	// keep-alive period a client keeping its connection usually picks.
	idleEviction time.Duration
	// handshakeBusyAge is how old a handshake that keeps sending must be
	// before a new client may replace it (listener_age.go): four probe
	// timeouts before the first RTT sample, in which a client on a
	// path as slow as InitialRTT assumes completes its handshake even
	// when a flight or two are lost.
	handshakeBusyAge time.Duration
}

// serverLimits checks the Config's server limits and fills in their
// defaults.
func (c *Config) serverLimits() (serverLimits, error) {
	if c == nil {
		c = &Config{}
	}
	lim := serverLimits{
		handshakes:      c.MaxHandshakes,
		handshakesPerIP: c.MaxHandshakesPerIP,
		conns:           c.MaxConnections,
		connsPerIP:      c.MaxConnectionsPerIP,
		unvalidated:     c.MaxUnvalidatedHandshakes,
	}
	for _, f := range []struct {
		v    *int
		def  int
		name string
	}{
		{&lim.handshakes, DefaultMaxHandshakes, "MaxHandshakes"},
		{&lim.handshakesPerIP, DefaultMaxHandshakesPerIP, "MaxHandshakesPerIP"},
		{&lim.conns, DefaultMaxConnections, "MaxConnections"},
		{&lim.connsPerIP, DefaultMaxConnectionsPerIP, "MaxConnectionsPerIP"},
		{&lim.unvalidated, DefaultMaxUnvalidatedHandshakes, "MaxUnvalidatedHandshakes"},
	} {
		if *f.v < 0 {
			return lim, fmt.Errorf("%w: negative %s", errConfig, f.name)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	rtt := c.InitialRTT
	if rtt == 0 {
		rtt = recovery.DefaultInitialRTT
	}
	idle := c.MaxIdleTimeout
	if idle == 0 {
		idle = core.DefaultIdleTimeout
	}
	lim.handshakeSilence, lim.idleEviction = 3*rtt, idle/2
	lim.handshakeBusyAge = 4 * lim.handshakeSilence
	return lim, nil
}

// sourceOf is the source an address counts against: the IPv4 address, or
// the IPv6 /64 prefix, since one IPv6 host usually holds a whole /64 (RFC
// 4291 section 2.5.4) and could otherwise pose as many clients.
func sourceOf(a netip.AddrPort) netip.Prefix {
	ip := a.Addr().Unmap().WithZone("")
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// sourceUse is what one source holds.
type sourceUse struct {
	// handshakes counts its handshakes in progress: [0] without a token
	// that proved the address, [1] with one.
	handshakes [2]int
	// conns counts all its connections, handshakes included.
	conns int
}

func (u *sourceUse) empty() bool {
	return u.conns == 0 && u.handshakes == [2]int{}
}

// validIndex indexes sourceUse.handshakes.
func validIndex(validated bool) int {
	if validated {
		return 1
	}
	return 0
}
