package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
)

// largeCertTLS serves a certificate of some 5 KB, as a chain signed by a
// public CA can be: the server's first flight is then more than three
// times the client's first Initial, so that the anti-amplification limit
// (RFC 9000 section 8.1) holds part of it back until the client's address
// is validated.
func largeCertTLS(t *testing.T) *tls.Config {
	t.Helper()
	tmpl := &x509.Certificate{ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	for i := range 150 {
		tmpl.DNSNames = append(tmpl.DNSNames, fmt.Sprintf("gateway-%03d.satellite.example", i))
	}
	return &tls.Config{Certificates: []tls.Certificate{newTestCA(t).sign(t, tmpl)}, NextProtos: []string{"h3"}}
}

// heldSocket is a server socket that, once it read the client's first
// Initial datagram, reads nothing more until the server sent more than three
// times that datagram back, or hold passed. What the server sent by then
// is what it sends before the client's next datagram could validate the
// client's address: at most three times the first datagram, unless a
// token validated the address (RFC 9000 section 8.1).
type heldSocket struct {
	net.PacketConn
	hold     time.Duration
	received atomic.Int64 // the first datagram's size
	sent     atomic.Int64
	over     chan struct{} // closed once sent is over three times received
	overOnce sync.Once
	closed   chan struct{}
	shut     sync.Once
	held     sync.Once
	sentHeld int64 // sent when the hold ended
}

func newHeldSocket(pc net.PacketConn, hold time.Duration) *heldSocket {
	return &heldSocket{PacketConn: pc, hold: hold, over: make(chan struct{}), closed: make(chan struct{})}
}

func (s *heldSocket) ReadFrom(p []byte) (int, net.Addr, error) {
	if s.received.Load() > 0 {
		s.held.Do(func() {
			select {
			case <-s.over:
			case <-s.closed:
			case <-time.After(s.hold):
			}
			s.sentHeld = s.sent.Load()
		})
	}
	n, addr, err := s.PacketConn.ReadFrom(p)
	// The client's first Initial (a QUIC version 1 long header of type
	// 0, RFC 9000 section 17.2.2), not a straggler of its last
	// connection.
	if err == nil && n > 0 && p[0]&0xf0 == 0xc0 {
		s.received.CompareAndSwap(0, int64(n))
	}
	return n, addr, err
}

func (s *heldSocket) WriteTo(p []byte, addr net.Addr) (int, error) {
	if first := s.received.Load(); first > 0 && s.sent.Add(int64(len(p))) > 3*first {
		s.overOnce.Do(func() { close(s.over) })
	}
	return s.PacketConn.WriteTo(p, addr)
}

func (s *heldSocket) Close() error {
	s.shut.Do(func() { close(s.closed) })
	return s.PacketConn.Close()
}

// tokenSignal is a client's token store that tells when a server gave a
// token in a NEW_TOKEN frame.
type tokenSignal struct {
	quic.TokenStore
	given chan struct{}
}

func (s *tokenSignal) Put(key string, token []byte) {
	s.TokenStore.Put(key, token)
	select {
	case s.given <- struct{}{}:
	default:
	}
}

// openTunnelForToken opens a tunnel to the gateway at addr with the
// client's token store, waits for the server's NEW_TOKEN and closes it.
// The client's ClientHello fits one datagram (no hybrid key share), so
// that the server has it whole when the first datagram was read.
func openTunnelForToken(t *testing.T, addr string, store *tokenSignal) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tlsConf := &tls.Config{InsecureSkipVerify: true, CurvePreferences: []tls.CurveID{tls.X25519}}
	ct, err := Dial(ctx, "https://"+addr, DialOptions{Token: testToken, TLSConfig: tlsConf, QUIC: &quic.Config{TokenStore: store}})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer ct.Close()
	select {
	case <-store.given:
	case <-time.After(10 * time.Second):
		t.Fatal("no NEW_TOKEN from the gateway")
	}
}

// TestTokenKeyAcrossRestart: a gateway gives its client a NEW_TOKEN
// token; restarted on the same port with the same TokenKey, it takes the
// token of the client's next connection as proof of its address and sends
// its whole first flight at once, beyond three times the client's first
// datagram (RFC 9000 section 8.1). Restarted with another key, it cannot
// open the token and holds to the limit, and the tunnel opens all the
// same, a round trip later.
func TestTokenKeyAcrossRestart(t *testing.T) {
	testkit.CheckGoroutines(t)
	tlsConf := largeCertTLS(t)
	key, other := &quic.TokenKey{1, 2, 3}, &quic.TokenKey{3, 2, 1}
	store := &tokenSignal{TokenStore: quic.NewTokenCache(4), given: make(chan struct{}, 1)}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := udp.LocalAddr().String()
	for i, run := range []struct {
		name   string
		key    *quic.TokenKey
		lifted bool
	}{
		{"no token yet", key, false},
		{"the same key", key, true},
		{"another key", other, false},
	} {
		if i > 0 {
			if udp, err = net.ListenPacket("udp", addr); err != nil {
				t.Skipf("the port was taken in between: %v", err)
			}
		}
		// Three seconds: a server sending its flight on a busy machine
		// gets there well before; one held back never does.
		sock := newHeldSocket(udp, 3*time.Second)
		stop := serveTLSUntil(t, sock, ServerConfig{Token: testToken, TokenKey: run.key}, tlsConf)
		openTunnelForToken(t, addr, store)
		stop()
		first, sent := sock.received.Load(), sock.sentHeld
		t.Logf("%s: %d bytes sent after a first datagram of %d", run.name, sent, first)
		if lifted := sent > 3*first; lifted != run.lifted {
			t.Errorf("%s: the server sent %d bytes after a first datagram of %d before reading more; want the limit lifted: %v",
				run.name, sent, first, run.lifted)
		}
	}
}
