package quic

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/memnet"
)

// Early accept (ListenEarly) over memnet in virtual time.

// geoLink is 300 ms each way: a 600 ms round trip, without a rate limit,
// so that the times below are round trips exactly.
var geoLink = netsim.LinkConfig{Delay: 300 * time.Millisecond}

// relisten replaces the environment's Listener with an early one, or a
// plain one, with conf.
func (e *memEnv) relisten(early bool, conf *Config) {
	e.t.Helper()
	if err := e.l.Close(); err != nil {
		e.t.Fatal(err)
	}
	listen := e.server.Listen
	if early {
		listen = e.server.ListenEarly
	}
	l, err := listen(serverTLS(), conf)
	if err != nil {
		e.t.Fatal(err)
	}
	e.l = l
}

// TestEarlyAccept0RTT: over a 600 ms round trip, a resumed client's
// request in 0-RTT is answered in one round trip from the start of the
// connection by an early Listener, whose Accept returns the connection
// when the client's first flight arrives, half a round trip in; a plain
// Listener hands it out once the client's Finished arrived, and the
// answer takes two round trips.
func TestEarlyAccept0RTT(t *testing.T) {
	for _, early := range []bool{true, false} {
		t.Run(fmt.Sprintf("early=%v", early), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newMemEnv(t, geoLink, &Config{Allow0RTT: true})
				e.relisten(early, &Config{Allow0RTT: true})
				tc := resumingTLS()
				c, accepted := e.dialMem(tc, nil, false)
				echoOnce(t, c, <-accepted, 100)
				waitTicket(t, tc)
				_ = c.CloseWithError(0, "")
				time.Sleep(time.Second)

				start := time.Now()
				c, accepted = e.dialMem(tc, nil, true)
				defer c.CloseWithError(0, "")
				acceptedAt := make(chan time.Duration, 1)
				got := make(chan *Conn, 1)
				go func() {
					s, ok := <-accepted
					if ok {
						acceptedAt <- time.Since(start)
					}
					echoServer(chanOf(s, ok), got)
				}()
				st, err := c.OpenStream()
				if err != nil {
					t.Fatalf("OpenStream in 0-RTT: %v", err)
				}
				msg := testkit.Payload(500, 4)
				_, _ = st.Write(msg)
				_ = st.Close()
				back, err := io.ReadAll(st)
				elapsed := time.Since(start)
				if err != nil || !bytes.Equal(back, msg) {
					t.Fatalf("echo: %d of %d bytes, %v", len(back), len(msg), err)
				}
				s := <-got
				if s == nil {
					t.Fatal("no server connection")
				}
				at := <-acceptedAt
				wantAccept, wantEcho := 300*time.Millisecond, 600*time.Millisecond
				if !early {
					wantAccept, wantEcho = 900*time.Millisecond, 1200*time.Millisecond
				}
				if at != wantAccept || elapsed != wantEcho {
					t.Errorf("accepted at %v, echo complete at %v; want %v and %v", at, elapsed, wantAccept, wantEcho)
				}
				if !c.ConnectionState().Used0RTT || !s.ConnectionState().Used0RTT {
					t.Error("0-RTT not used")
				}
				select {
				case <-s.HandshakeComplete():
				case <-time.After(time.Second):
					t.Error("the server's handshake did not complete")
				}
			})
		})
	}
}

// chanOf is a channel that gives s, or closes, as Accept's would.
func chanOf(s *Conn, ok bool) <-chan *Conn {
	ch := make(chan *Conn, 1)
	if ok {
		ch <- s
	} else {
		close(ch)
	}
	return ch
}

// TestEarlyAcceptWithout0RTT: an early Listener hands out a connection
// without 0-RTT half a round trip in as well; HandshakeComplete closes a
// round trip later, when the client's Finished arrives, and the streams
// work as on any connection.
func TestEarlyAcceptWithout0RTT(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, geoLink, nil)
		e.relisten(true, nil)
		if !e.l.Early() {
			t.Fatal("Listener from ListenEarly not early")
		}
		start := time.Now()
		c, accepted := e.dialMem(clientTLS(), nil, false)
		defer c.CloseWithError(0, "")
		if d := time.Since(start); d != 600*time.Millisecond {
			t.Errorf("client handshake took %v, want one round trip", d)
		}
		s := <-accepted
		select {
		case <-s.HandshakeComplete():
			t.Error("server handshake complete when the client's was")
		default:
		}
		<-s.HandshakeComplete()
		if d := time.Since(start); d != 900*time.Millisecond {
			t.Errorf("server handshake complete at %v, want 900ms", d)
		}
		echoOnce(t, c, s, 3000)
	})
}

// TestEarlyHandshakesBounded: connections an early Listener handed out
// whose handshake never completes (clients that send their first flight
// and vanish) stay among the handshakes: one source gets no more than
// MaxHandshakesPerIP of them (the others are sent a Retry, which these
// clients never answer), and the handshake timeout ends them all and
// frees their places.
func TestEarlyHandshakesBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const perIP = 4
		conf := &Config{MaxHandshakesPerIP: perIP, HandshakeTimeout: 5 * time.Second}
		e := newLimitsEnv(t, conf)
		if err := e.l.Close(); err != nil {
			t.Fatal(err)
		}
		l, err := e.server.ListenEarly(serverTLS(), conf)
		if err != nil {
			t.Fatal(err)
		}
		e.l = l
		var handed []*Conn
		handedOut := make(chan *Conn, 16)
		go func() {
			for {
				c, err := l.Accept(context.Background())
				if err != nil {
					close(handedOut)
					return
				}
				handedOut <- c
			}
		}()
		for port := range 2 * perIP {
			addr := netip.AddrPortFrom(attackerIP, uint16(1000+port))
			e.dialSilent(e.client(addr, &firstFlightConn{Conn: e.socket(addr)}), 1)
		}
		time.Sleep(100 * time.Millisecond)
		for range perIP {
			handed = append(handed, <-handedOut)
		}
		hs, est, fromAttacker := l.held(attackerIP)
		if hs != perIP || est != 0 || fromAttacker != perIP {
			t.Errorf("server holds %d handshakes (%d from the attacker) and %d established; want %d, %d, 0", hs, fromAttacker, est, perIP, perIP)
		}
		select {
		case c := <-handedOut:
			t.Errorf("a connection from %v handed out beyond the limit", c.RemoteAddr())
		default:
		}
		time.Sleep(conf.HandshakeTimeout)
		for i, c := range handed {
			select {
			case <-c.Context().Done():
			default:
				t.Errorf("early connection %d still open after the handshake timeout", i)
			}
		}
		if hs, _, _ := l.held(attackerIP); hs != 0 {
			t.Errorf("server holds %d handshakes after the timeout, want 0", hs)
		}
		c, err := dialServer(e.client(legitAddr, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.CloseWithError(0, "")
	})
}

// firstFlightConn sends the datagrams of the client's first flight, whole
// (its ClientHello may take two), and nothing once it heard from the
// server: a client whose handshake never completes, though the server has
// all it needs to hand the connection out early.
type firstFlightConn struct {
	*memnet.Conn
	heard atomic.Bool
}

func (f *firstFlightConn) ReadFromUDPAddrPort(p []byte) (int, netip.AddrPort, error) {
	n, from, err := f.Conn.ReadFromUDPAddrPort(p)
	if err == nil {
		f.heard.Store(true)
	}
	return n, from, err
}

func (f *firstFlightConn) WriteToUDPAddrPort(p []byte, addr netip.AddrPort) (int, error) {
	if f.heard.Load() {
		return len(p), nil
	}
	return f.Conn.WriteToUDPAddrPort(p, addr)
}

func (f *firstFlightConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if f.heard.Load() {
		return len(p), nil
	}
	return f.Conn.WriteTo(p, addr)
}
