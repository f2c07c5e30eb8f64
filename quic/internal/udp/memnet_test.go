package udp

import (
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/memnet"
)

// plainPacketConn hides the AddrPort methods of the conn it wraps, so the
// portable path has to use ReadFrom and WriteTo with net.Addrs.
type plainPacketConn struct{ net.PacketConn }

func TestPortableOverMemnet(t *testing.T) {
	for _, plain := range []bool{false, true} {
		name := "addrport"
		if plain {
			name = "net.Addr"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { portableOverMemnet(t, plain) })
		})
	}
}

func portableOverMemnet(t *testing.T, plain bool) {
	const seed = 400
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 4))
	nw := memnet.New(memnet.Config{Seed: seed})
	defer nw.Close()
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	link := netsim.LinkConfig{Delay: 5 * time.Millisecond}
	if _, err := nw.AddPath(a, b, link, link); err != nil {
		t.Fatal(err)
	}
	wrap := func(addr netip.AddrPort) (*Conn, netip.AddrPort) {
		mc, err := nw.Listen(addr)
		if err != nil {
			t.Fatal(err)
		}
		var pc net.PacketConn = mc
		if plain {
			pc = plainPacketConn{mc}
		}
		c, err := New(pc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return c, mc.LocalAddrPort()
	}
	snd, src := wrap(netip.AddrPortFrom(a, 5000))
	defer snd.Close()
	if caps := snd.Capabilities(); caps != (Capabilities{}) || caps.String() != "portable" {
		t.Fatalf("capabilities of an in-memory conn: %+v %q", caps, caps)
	}
	var rcvs []*Conn
	var dests []netip.AddrPort
	for i := range 3 {
		r, addr := wrap(netip.AddrPortFrom(b, uint16(443+i)))
		defer r.Close()
		rcvs = append(rcvs, r)
		dests = append(dests, addr)
	}
	batch := mixedBatch(rng, dests, 400, 1452)
	sendInChunks(t, snd, rng, batch)
	time.Sleep(10 * time.Millisecond) // past the link's delay: all delivered
	for i, r := range rcvs {
		want := byDest(batch, dests[i])
		msgs := r.NewReadBatch(8)
		expectSequence(t, collect(t, r, msgs, len(want)), want, src)
		expectSilence(t, r, msgs)
	}
	if s := snd.Stats(); s.WriteCalls != uint64(len(batch)) || s.WriteDatagrams != uint64(len(batch)) {
		t.Fatalf("sender stats %+v for %d datagrams", s, len(batch))
	}
}
