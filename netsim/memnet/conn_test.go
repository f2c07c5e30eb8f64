package memnet

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/netsim"
)

var (
	clientAddr = netip.MustParseAddrPort("10.0.0.1:5000")
	serverAddr = netip.MustParseAddrPort("10.0.0.2:443")
)

// newPair builds a network with one path and a Conn on each side.
func newPair(t *testing.T, cfg Config, path netsim.LinkConfig) (*Network, *Conn, *Conn) {
	t.Helper()
	n := New(cfg)
	if _, err := n.AddPath(clientAddr.Addr(), serverAddr.Addr(), path, path); err != nil {
		t.Fatal(err)
	}
	c, err := n.Listen(clientAddr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := n.Listen(serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n, c, s
}

// echo answers every datagram until the Conn is closed.
func echo(c net.PacketConn) {
	buf := make([]byte, 2048)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			return
		}
		if _, err := c.WriteTo(buf[:n], from); err != nil {
			return
		}
	}
}

func TestEchoExactRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c, s := newPair(t, Config{Seed: 1}, netsim.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond})
		go echo(s)
		msg := make([]byte, 1000)
		msg[0] = 42
		start := time.Now()
		if _, err := c.WriteTo(msg, net.UDPAddrFromAddrPort(serverAddr)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2048)
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		// 0.8 ms of serialization and 15 ms of propagation, each way.
		if rtt := time.Since(start); rtt != 31600*time.Microsecond {
			t.Errorf("round trip %v, want 31.6ms", rtt)
		}
		if n != 1000 || buf[0] != 42 || from.String() != serverAddr.String() {
			t.Errorf("got %d bytes from %v, first %d", n, from, buf[0])
		}
	})
}

func TestProfilePathRoundTrip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := New(Config{Seed: 1})
		defer n.Close()
		p, _ := netsim.LookupProfile("geo")
		path, err := n.AddProfilePath(clientAddr.Addr(), serverAddr.Addr(), p)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := n.Listen(clientAddr)
		s, _ := n.Listen(serverAddr)
		go echo(s)
		start := time.Now()
		_, _ = c.WriteToUDPAddrPort(make([]byte, 1250), serverAddr)
		if _, _, err := c.ReadFromUDPAddrPort(make([]byte, 2000)); err != nil {
			t.Fatal(err)
		}
		// Up: 1 ms at 10 Mbit/s; down: 0.2 ms at 50 Mbit/s; 325 ms each way.
		if rtt := time.Since(start); rtt != 651200*time.Microsecond {
			t.Errorf("round trip %v, want 651.2ms", rtt)
		}
		up, down := path.Stats()
		if up.Delivered != 1 || down.Delivered != 1 {
			t.Errorf("up %+v down %+v", up, down)
		}
	})
}

func TestReadDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c, _ := newPair(t, Config{}, netsim.LinkConfig{})
		start := time.Now()
		_ = c.SetReadDeadline(start.Add(50 * time.Millisecond))
		_, _, err := c.ReadFrom(make([]byte, 10))
		var ne net.Error
		if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("ReadFrom = %v, want a timeout", err)
		}
		if waited := time.Since(start); waited != 50*time.Millisecond {
			t.Errorf("timed out after %v, want 50ms", waited)
		}
		// A deadline in the past fails at once; clearing it lets reads
		// block again.
		if _, _, err := c.ReadFrom(nil); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("second read = %v", err)
		}
	})
}

func TestDeadlineMovedWhileBlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c, _ := newPair(t, Config{}, netsim.LinkConfig{})
		start := time.Now()
		done := make(chan error)
		go func() {
			_, _, err := c.ReadFrom(make([]byte, 10))
			done <- err
		}()
		time.Sleep(10 * time.Millisecond)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
		err := <-done
		if !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != 15*time.Millisecond {
			t.Errorf("read ended at %v with %v, want a timeout at 15ms", time.Since(start), err)
		}
	})
}

func TestCloseUnblocksReaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, c, _ := newPair(t, Config{}, netsim.LinkConfig{})
		done := make(chan error, 2)
		for range 2 {
			go func() {
				_, _, err := c.ReadFrom(make([]byte, 10))
				done <- err
			}()
		}
		synctest.Wait()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := <-done; !errors.Is(err, net.ErrClosed) {
				t.Errorf("blocked read ended with %v, want net.ErrClosed", err)
			}
		}
		if _, err := c.WriteToUDPAddrPort([]byte("x"), serverAddr); !errors.Is(err, net.ErrClosed) {
			t.Errorf("write after close = %v", err)
		}
		if err := c.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second close = %v", err)
		}
		// The address is free again.
		if _, err := n.Listen(clientAddr); err != nil {
			t.Errorf("listen after close: %v", err)
		}
	})
}

func TestLossOverflowAndTruncation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, c, s := newPair(t, Config{ReceiveBufferBytes: 2000},
			netsim.LinkConfig{Delay: time.Millisecond, Loss: "drop:0"})
		for i := range 4 {
			_, _ = c.WriteToUDPAddrPort([]byte{byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9}, serverAddr)
		}
		for range 3 {
			_, _ = c.WriteToUDPAddrPort(make([]byte, 900), serverAddr)
		}
		time.Sleep(2 * time.Millisecond)
		// Packet 0 was lost; 1-3 (30 bytes) and two 900-byte packets fit
		// in 2000 bytes, the third does not.
		buf := make([]byte, 4)
		for want := byte(1); want <= 3; want++ {
			k, _, err := s.ReadFromUDPAddrPort(buf)
			if err != nil || k != 4 || buf[0] != want {
				t.Fatalf("read %d bytes %v, err %v; want packet %d truncated to 4", k, buf, err, want)
			}
		}
		if _, overflow := n.Dropped(); overflow != 1 {
			t.Errorf("overflows %d, want 1", overflow)
		}
	})
}

func TestAddressingErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, c, _ := newPair(t, Config{}, netsim.LinkConfig{})
		if _, err := c.WriteToUDPAddrPort([]byte("x"), netip.MustParseAddrPort("192.0.2.7:1")); !errors.Is(err, ErrNoRoute) {
			t.Errorf("write to unroutable = %v, want ErrNoRoute", err)
		}
		if _, err := c.WriteTo([]byte("x"), &net.TCPAddr{}); err == nil {
			t.Error("write to a TCP address accepted")
		}
		if _, err := n.Listen(clientAddr); err == nil {
			t.Error("listened twice on one address")
		}
		a, err := n.Listen(netip.AddrPortFrom(clientAddr.Addr(), 0))
		if err != nil || a.LocalAddrPort().Port() != 49152 {
			t.Errorf("ephemeral listen: %v %v", a.LocalAddrPort(), err)
		}
		if _, err := n.AddPath(clientAddr.Addr(), serverAddr.Addr(), netsim.LinkConfig{}, netsim.LinkConfig{}); err == nil {
			t.Error("duplicate path accepted")
		}
		if _, err := n.AddPath(clientAddr.Addr(), netip.MustParseAddr("10.0.0.3"), netsim.LinkConfig{Loss: "bogus"}, netsim.LinkConfig{}); err == nil {
			t.Error("invalid link accepted")
		}
		// Nobody listens on port 9: counted, not delivered.
		_, _ = c.WriteToUDPAddrPort([]byte("x"), netip.AddrPortFrom(serverAddr.Addr(), 9))
		time.Sleep(time.Millisecond)
		if noPort, _ := n.Dropped(); noPort != 1 {
			t.Errorf("no-port drops %d, want 1", noPort)
		}
		// IPv4 in 16-byte form, as net.ParseIP returns it, is routed.
		ua := &net.UDPAddr{IP: net.ParseIP("10.0.0.2"), Port: 443}
		if _, err := c.WriteTo([]byte("x"), ua); err != nil {
			t.Errorf("write to %v: %v", ua, err)
		}
	})
}

// TestManyPacketsKeepRate sends a burst and checks every arrival time: 100
// packets of 1250 B at 10 Mbit/s arrive 1 ms apart. The queue is raised
// above its 64 kB default so that the 125 kB burst fits.
func TestManyPacketsKeepRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c, s := newPair(t, Config{}, netsim.LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond, QueueBytes: 200_000})
		start := time.Now()
		for range 100 {
			_, _ = c.WriteToUDPAddrPort(make([]byte, 1250), serverAddr)
		}
		buf := make([]byte, 1500)
		for i := range 100 {
			if _, _, err := s.ReadFromUDPAddrPort(buf); err != nil {
				t.Fatal(err)
			}
			want := 20*time.Millisecond + time.Duration(i+1)*time.Millisecond
			if got := time.Since(start); got != want {
				t.Fatalf("packet %d at %v, want %v", i, got, want)
			}
		}
	})
}
