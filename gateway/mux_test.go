package gateway

import (
	"errors"
	"io"
	"net/netip"
	"testing"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/connectip/connectiptest"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// muxWithClients is a mux of two clients over in-memory carriers, each
// of which has sent perClient packets numbered 0 up, of 100 bytes plus
// their number modulo 1000, but for number 7, longer than the device's
// MTU.
func muxWithClients(t *testing.T, mtu, perClient int) (*mux, []*connectiptest.End, []netip.Addr) {
	t.Helper()
	m := newMux(mtu)
	t.Cleanup(func() { m.Close() })
	var raws []*connectiptest.End
	srcs := []netip.Addr{netip.MustParseAddr("10.9.0.2"), netip.MustParseAddr("10.9.0.3")}
	for _, src := range srcs {
		raw, end := connectiptest.Pipe(connectiptest.Config{})
		prefix := netip.PrefixFrom(src, 32)
		sess, err := connectip.NewProxy(end, []netip.Prefix{prefix}, []connectip.IPRoute{connectip.RouteFromPrefix(netip.MustParsePrefix("0.0.0.0/0"), 0)}, connectip.ProxyConfig{Config: connectip.Config{MTU: mtu + 200}})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.add(&client{sess: sess, addrs: []netip.Prefix{prefix}}, func() {}); err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	dst := netip.MustParseAddr("10.9.0.1")
	for i := range perClient {
		for c, raw := range raws {
			size := 100 + i%1000
			if i == 7 {
				size = mtu + 100 // beyond the device's MTU
			}
			if err := raw.SendDatagram(connectip.AppendDatagram(nil, 0, tunneltest.IPv4Packet(srcs[c], dst, size, uint32(i)))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return m, raws, srcs
}

// TestMuxLends: the device's writer borrows the clients' batches
// (LendPackets): each client's packets come in its order, none twice,
// without the one longer than the device's MTU, and TryLendPackets says
// when nothing waits.
func TestMuxLends(t *testing.T) {
	const mtu, perClient = 1500, 300
	m, _, srcs := muxWithClients(t, mtu, perClient)
	next := []uint32{0, 0}
	for got := 0; got < 2*(perClient-1); {
		b := m.TryLendPackets()
		if b == nil {
			var err error
			if b, err = m.LendPackets(); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range b.Packets {
			c := 0
			if netip.AddrFrom4([4]byte(p[12:16])) == srcs[1] {
				c = 1
			}
			if next[c] == 7 {
				next[c]++
			}
			if seq := tunneltest.Seq(p); seq != next[c] || len(p) != 100+int(seq)%1000 {
				t.Fatalf("client %d: packet %d of %d bytes, want packet %d", c, seq, len(p), next[c])
			}
			next[c]++
			got++
		}
		b.Release()
	}
	if b := m.TryLendPackets(); b != nil {
		t.Fatalf("%d packets more than sent", len(b.Packets))
	}
}

// TestMuxBatches: the packets two clients send reach the device's reader
// through the mux's batches each in its client's order and none twice, a
// packet longer than the device's MTU is skipped, a buffer too short gives
// io.ErrShortBuffer, and TryReadPacket says when nothing waits.
func TestMuxBatches(t *testing.T) {
	const mtu, perClient = 1500, 300
	m, raws, srcs := muxWithClients(t, mtu, perClient)
	dst := netip.MustParseAddr("10.9.0.1")
	next := []uint32{0, 0}
	buf := make([]byte, mtu)
	for got := 0; got < 2*(perClient-1); got++ {
		n, ok, err := m.TryReadPacket(buf)
		if !ok {
			n, err = m.ReadPacket(buf)
		}
		if err != nil {
			t.Fatal(err)
		}
		c := 0
		if netip.AddrFrom4([4]byte(buf[12:16])) == srcs[1] {
			c = 1
		}
		seq := tunneltest.Seq(buf[:n])
		if next[c] == 7 {
			next[c]++
		}
		if seq != next[c] || n != 100+int(seq)%1000 {
			t.Fatalf("client %d: packet %d of %d bytes, want packet %d", c, seq, n, next[c])
		}
		next[c]++
	}
	if _, ok, _ := m.TryReadPacket(buf); ok {
		t.Fatal("a packet more than sent")
	}
	if err := raws[0].SendDatagram(connectip.AppendDatagram(nil, 0, tunneltest.IPv4Packet(srcs[0], dst, 200, 0))); err != nil {
		t.Fatal(err)
	}
	if n, err := m.ReadPacket(buf[:50]); n != 50 || !errors.Is(err, io.ErrShortBuffer) {
		t.Fatalf("short buffer: %d, %v", n, err)
	}
}
