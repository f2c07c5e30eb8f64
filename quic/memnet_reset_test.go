package quic

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// crashable drops every datagram written once dead: a server that lost
// its state without a word.
type crashable struct {
	net.PacketConn
	dead atomic.Bool
}

func (c *crashable) WriteTo(b []byte, addr net.Addr) (int, error) {
	if c.dead.Load() {
		return len(b), nil
	}
	return c.PacketConn.WriteTo(b, addr)
}

func TestStatelessReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		// Replace the environment's server by one on a crashable socket
		// with a known reset key.
		_ = e.server.Close()
		key := &StatelessResetKey{1, 2, 3}
		spc := e.server.Conn
		cr := &crashable{PacketConn: spc}
		first := &Transport{Conn: cr, StatelessResetKey: key}
		c := listenAndDial(t, e, first, spc.LocalAddr())
		time.Sleep(100 * time.Millisecond)
		// The server crashes, and comes back with the same key.
		cr.dead.Store(true)
		_ = first.Close()
		listenAgain(t, &Transport{Conn: spc, StatelessResetKey: key})
		start := time.Now()
		st, _ := c.OpenStream()
		_, _ = st.Write([]byte("anyone there?"))
		expectReset(t, c, start)
	})
}

// listenAndDial starts a server on tr, accepting every connection, and
// dials it from the environment's client at addr.
func listenAndDial(t *testing.T, e *memEnv, tr *Transport, addr net.Addr) *Conn {
	t.Helper()
	l, err := tr.Listen(serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	go func() { _, _ = l.Accept(ctx) }()
	c, err := e.client.Dial(ctx, addr, clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// listenAgain starts tr as the endpoint that lost its state and came
// back with the same reset key, closed when the test ends.
func listenAgain(t *testing.T, tr *Transport) {
	t.Helper()
	t.Cleanup(func() { _ = tr.Close() })
	if _, err := tr.Listen(serverTLS(), nil); err != nil {
		t.Fatal(err)
	}
}

// expectReset waits for c to end and checks that a Stateless Reset
// ended it within a round trip of start, not an idle timeout.
func expectReset(t *testing.T, c *Conn, start time.Time) {
	t.Helper()
	<-c.Context().Done()
	var sre *StatelessResetError
	if err := context.Cause(c.Context()); !errors.As(err, &sre) {
		t.Fatalf("closed with %v, not a stateless reset", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("reset took %v", d)
	}
}

func TestVersionNegotiation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		raw, err := e.n.Listen(netip.AddrPortFrom(memClientAddr.Addr(), 9999))
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		dcid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
		scid := []byte{9, 10, 11, 12}
		pkt := []byte{0xc0, 0x1a, 0x2a, 0x3a, 0x4a, byte(len(dcid))}
		pkt = append(pkt, dcid...)
		pkt = append(pkt, byte(len(scid)))
		pkt = append(pkt, scid...)
		short := slices.Clone(pkt)
		pkt = append(pkt, make([]byte, 1200-len(pkt))...)

		// Too short to open a connection: no answer, which could
		// amplify.
		if _, err := raw.WriteToUDPAddrPort(short, memServerAddr); err != nil {
			t.Fatal(err)
		}
		_ = raw.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 1500)
		if _, _, err := raw.ReadFromUDPAddrPort(buf); err == nil {
			t.Error("a short datagram of an unknown version was answered")
		}

		_ = raw.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := raw.WriteToUDPAddrPort(pkt, memServerAddr); err != nil {
			t.Fatal(err)
		}
		n, _, err := raw.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatal(err)
		}
		vn, err := wire.ParseVersionNegotiation(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(vn.DstConnID, scid) || !slices.Equal(vn.SrcConnID, dcid) {
			t.Errorf("connection IDs not echoed: %x %x", vn.DstConnID, vn.SrcConnID)
		}
		if !slices.Contains(vn.Versions, wire.Version1) || !slices.Contains(vn.Versions, wire.Version2) {
			t.Errorf("versions offered: %v", vn.Versions)
		}
	})
}
