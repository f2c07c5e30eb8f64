package quic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// The attacks of issue #13 on a Listener's limits, in virtual time.

var (
	legitAddr   = netip.MustParseAddrPort("10.0.0.1:5000")
	attackerIP  = netip.MustParseAddr("10.9.0.1")
	retryAlways = func(net.Addr) bool { return true }
)

// legitInitials is how many Initial packets carry a legitimate client's
// ClientHello: crypto/tls's post-quantum key share makes it two. The
// server answers each that reaches it without a connection.
const legitInitials = 2

// attackerAddr is the i-th attacking node.
func attackerAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, 9, byte(i >> 8), byte(i)})
}

// TestSilentHandshakesFromOneAddress: 1,100 handshakes that answer the
// Retry and go silent, from 110 ports of one address, used to take every
// place of the Listener for the 20 s of the handshake timeout. Now the
// address holds its own share, is refused beyond it, and a client from
// elsewhere connects and downloads; with and without Retry.
func TestSilentHandshakesFromOneAddress(t *testing.T) {
	for _, retry := range []bool{false, true} {
		t.Run(fmt.Sprintf("retry=%v", retry), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				conf := &Config{}
				if retry {
					conf.RequireAddressValidation = retryAlways
				}
				e := newLimitsEnv(t, conf)
				for port := range 110 {
					e.dialSilent(e.silentClient(netip.AddrPortFrom(attackerIP, uint16(1000+port))), 10)
				}
				time.Sleep(100 * time.Millisecond)
				hs, _, fromAttacker := e.l.held(attackerIP)
				// Without Retry, the address holds its share of
				// handshakes without a token and its share with one
				// (those it got a Retry for): forged Initials cannot
				// fill the second.
				want := DefaultMaxHandshakesPerIP
				if !retry {
					want *= 2
				}
				if fromAttacker != want || hs != want {
					t.Errorf("server holds %d handshakes, %d from the attacker; want %d", hs, fromAttacker, want)
				}
				if got := e.outcomesNow()["closed by server: CONNECTION_REFUSED"]; got != 1100-want {
					t.Errorf("%d attempts refused, want %d", got, 1100-want)
				}
				c := e.dial(e.client(legitAddr, nil), nil)
				download(t, c)
				_ = c.CloseWithError(0, "")
				// Without Retry, the attempts beyond the address's share
				// without a token get one; with it, all do, and the
				// legitimate client too, whose ClientHello (with its
				// post-quantum key share) fills two Initial packets,
				// each answered.
				retries := uint64(1100 - DefaultMaxHandshakesPerIP)
				if retry {
					retries = 1100 + legitInitials
				}
				wantListenerStats(t, e.l, RefusedStats{HandshakesPerIP: uint64(1100 - want)}, EvictedStats{}, retries)
			})
		})
	}
}

// TestSilentHandshakesFromManyAddresses: silent handshakes from 44
// addresses, 25 each, fill the Listener's 1,024 places; a client that
// comes while they are fresh is refused, and one that comes once they
// have been silent for a probe timeout takes the place of the oldest and
// downloads.
func TestSilentHandshakesFromManyAddresses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newLimitsEnv(t, &Config{RequireAddressValidation: retryAlways})
		for i := range 44 {
			e.dialSilent(e.silentClient(netip.AddrPortFrom(attackerAddr(i), 1000)), 25)
		}
		time.Sleep(100 * time.Millisecond)
		if hs, _, _ := e.l.held(attackerIP); hs != DefaultMaxHandshakes {
			t.Fatalf("server holds %d handshakes, want %d", hs, DefaultMaxHandshakes)
		}
		legit := e.client(legitAddr, nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := legit.Dial(ctx, net.UDPAddrFromAddrPort(memServerAddr), clientTLS(), nil)
		cancel()
		var te *TransportError
		if !errors.As(err, &te) || te.ErrorCode != TransportErrorCode(wire.CodeConnectionRefused) {
			t.Errorf("a client among fresh handshakes: %v, want CONNECTION_REFUSED", err)
		}
		time.Sleep(time.Second)
		c := e.dial(legit, nil)
		download(t, c)
		_ = c.CloseWithError(0, "")
		if got := e.outcomesNow()["closed by server: APPLICATION_ERROR"]; got != 1 {
			t.Errorf("%d silent handshakes evicted, want 1 (outcomes %v)", got, e.outcomesNow())
		}
		// 76 attackers and the legitimate client's first attempt (each
		// of its Initials) met the full table; everyone got a Retry
		// first.
		wantListenerStats(t, e.l, RefusedStats{Handshakes: 1100 - DefaultMaxHandshakes + legitInitials},
			EvictedStats{SilentHandshakes: 1}, 1100+2*legitInitials)
	})
}

// TestBusyHandshakes: handshakes that answer the Retry and then keep
// sending, never silent, fill the Listener's places. A client that comes
// while they are younger than the bound of listener_age.go is refused
// (a slow handshake is not cut short); once they are older, a new client
// takes the place of the oldest and downloads, before the handshake
// timeout would have freed any.
func TestBusyHandshakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 64
		t0 := time.Now()
		e := newLimitsEnv(t, &Config{MaxHandshakes: n, RequireAddressValidation: retryAlways})
		for i := range n {
			e.dialBusy(netip.AddrPortFrom(attackerAddr(i%4), uint16(1000+i)), 300*time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		if hs, _, _ := e.l.held(attackerIP); hs != n {
			t.Fatalf("server holds %d handshakes, want %d", hs, n)
		}
		legit := e.client(legitAddr, nil)
		for _, wait := range []time.Duration{0, 2 * time.Second} {
			time.Sleep(wait)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err := legit.Dial(ctx, net.UDPAddrFromAddrPort(memServerAddr), clientTLS(), nil)
			cancel()
			wantRefused(t, fmt.Sprintf("a client among busy handshakes %v old", time.Since(t0).Round(100*time.Millisecond)), err)
		}
		// The handshakes are past 4 s old, the bound: the oldest goes.
		time.Sleep(2 * time.Second)
		c := e.dial(legit, nil)
		download(t, c)
		_ = c.CloseWithError(0, "")
		if got := e.outcomesNow()["closed by server: APPLICATION_ERROR"]; got != 1 {
			t.Errorf("%d busy handshakes evicted, want 1 (outcomes %v)", got, e.outcomesNow())
		}
		wantListenerStats(t, e.l, RefusedStats{Handshakes: 2 * legitInitials}, EvictedStats{BusyHandshakes: 1}, n+3*legitInitials)
	})
}

// nodeAddr is a client address of its own, the i-th.
func nodeAddr(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 5000)
}

// wantRefused fails the test unless err is the server's
// CONNECTION_REFUSED.
func wantRefused(t *testing.T, what string, err error) {
	t.Helper()
	var te *TransportError
	if !errors.As(err, &te) || !te.Remote || te.ErrorCode != TransportErrorCode(wire.CodeConnectionRefused) {
		t.Errorf("%s: %v, want CONNECTION_REFUSED", what, err)
	}
}

// TestConnectionLimit: at MaxConnections, a new client is refused while
// every connection is in use; once connections have been idle for half
// the idle timeout, new clients replace them, the longest idle first,
// but never one whose client keeps it alive. The server's end of an
// evicted connection reports an idle timeout, and its client learns of it
// from a Stateless Reset when it next sends.
func TestConnectionLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newLimitsEnv(t, &Config{MaxConnections: 4})
		active := e.dial(e.client(nodeAddr(0), nil), &Config{KeepAlivePeriod: 2 * time.Second})
		var idle []*Conn
		for i := range 3 {
			idle = append(idle, e.dial(e.client(nodeAddr(1+i), nil), nil))
		}
		time.Sleep(time.Second)
		_, err := dialServer(e.client(nodeAddr(10), nil), nil)
		wantRefused(t, "a client beyond the limit", err)

		time.Sleep(15 * time.Second)
		for i, c := range idle {
			download(t, e.dial(e.client(nodeAddr(20+i), nil), nil))
			var ite *IdleTimeoutError
			if err := context.Cause(e.serverConn(c).Context()); !errors.As(err, &ite) {
				t.Errorf("idle connection %d at the server: %v, want an idle timeout", i, err)
			}
		}
		_, err = dialServer(e.client(nodeAddr(30), nil), nil)
		wantRefused(t, "a client while the others are fresh or kept alive", err)
		download(t, active)

		st, err := idle[0].OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		_ = st.Close()
		var sre *StatelessResetError
		if _, err := st.Read(make([]byte, 1)); !errors.As(err, &sre) {
			t.Errorf("the client of an evicted connection: %v, want a stateless reset", err)
		}
	})
}

// TestConnectionsPerIP: one address with many sockets holds
// MaxConnectionsPerIP connections; beyond, it is refused, and others are
// not.
func TestConnectionsPerIP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newLimitsEnv(t, &Config{MaxConnectionsPerIP: 3})
		for port := range 3 {
			e.dial(e.client(netip.AddrPortFrom(attackerIP, uint16(1000+port)), nil), nil)
		}
		_, err := dialServer(e.client(netip.AddrPortFrom(attackerIP, 2000), nil), nil)
		wantRefused(t, "a fourth connection from one address", err)
		download(t, e.dial(e.client(legitAddr, nil), nil))
	})
}
