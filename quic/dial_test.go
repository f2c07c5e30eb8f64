package quic

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"
)

// TestDialEarlyResumes0RTT: the package-level DialEarly, over a socket of
// the caller's, returns before the handshake; with the session ticket of
// an earlier connection it resumes the session and its first request goes
// in 0-RTT packets (RFC 9001 section 4.6), which the server takes. The
// socket stays open when the connection closes, as Dial promises.
func TestDialEarlyResumes0RTT(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10msOnly, &Config{Allow0RTT: true})
		tc := resumingTLS()
		c, accepted := e.dialMem(tc, nil, false)
		echoOnce(t, c, <-accepted, 100)
		waitTicket(t, tc)
		_ = c.CloseWithError(0, "")

		// A second socket of the client host: the connection uses it
		// alone, beside the environment's client Transport.
		pc, err := e.n.Listen(netip.AddrPortFrom(memClientAddr.Addr(), memClientAddr.Port()+1))
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *Conn, 1)
		echoServer(e.acceptNext(), got)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		c, err = DialEarly(ctx, pc, net.UDPAddrFromAddrPort(memServerAddr), tc, nil)
		if err != nil {
			t.Fatalf("DialEarly: %v", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("DialEarly took %v, want no wait for the handshake", d)
		}
		st, err := c.OpenStream()
		if err != nil {
			t.Fatalf("OpenStream before the handshake: %v", err)
		}
		msg := []byte("GET /index.html\r\n")
		if _, err := st.Write(msg); err != nil {
			t.Fatal(err)
		}
		_ = st.Close()
		select {
		case <-c.HandshakeComplete():
			t.Fatal("the handshake completed before the early request was written")
		default:
		}
		back, err := io.ReadAll(st)
		if err != nil || !bytes.Equal(back, msg) {
			t.Fatalf("echo %q, %v", back, err)
		}
		s := <-got
		cs, ss := c.ConnectionState(), s.ConnectionState()
		if !cs.TLS.DidResume || !ss.TLS.DidResume || !cs.Used0RTT || !ss.Used0RTT {
			t.Errorf("resumed %v/%v, 0-RTT %v/%v; want all true", cs.TLS.DidResume, ss.TLS.DidResume, cs.Used0RTT, ss.Used0RTT)
		}
		if err := c.CloseWithError(0, ""); err != nil {
			t.Fatal(err)
		}
		if err := pc.Close(); err != nil {
			t.Errorf("closing the caller's socket after the connection: %v (DialEarly closed it?)", err)
		}
	})
}
