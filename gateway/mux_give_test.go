package gateway

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// TestMuxGivesPackets: GivePackets sends each run of a batch to the
// client that owns its destination, in order, refuses a packet for no
// client with its index, and leaves in the batch what the sessions gave
// back: here, over carriers that copy, the packets themselves.
func TestMuxGivesPackets(t *testing.T) {
	m, raws, srcs := muxWithClients(t, 1500, 0)
	from := netip.MustParseAddr("198.51.100.1")
	stranger := netip.MustParseAddr("10.9.0.77")
	pkts := [][]byte{
		tunneltest.IPv4Packet(from, srcs[0], 200, 0),
		tunneltest.IPv4Packet(from, srcs[0], 300, 1),
		tunneltest.IPv4Packet(from, stranger, 100, 2),
		tunneltest.IPv4Packet(from, srcs[1], 400, 3),
		tunneltest.IPv4Packet(from, srcs[0], 500, 4),
	}
	orig := append([][]byte(nil), pkts...)
	var refused []int
	err := m.GivePackets(pkts, func(i int, _ []byte, err error) {
		if !errors.Is(err, connectip.ErrDropped) {
			t.Errorf("packet %d refused with %v", i, err)
		}
		refused = append(refused, i)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(refused) != 1 || refused[0] != 2 {
		t.Fatalf("refused %v, want [2]", refused)
	}
	for i := range pkts {
		if &pkts[i][0] != &orig[i][0] {
			t.Fatalf("packet %d left the batch although the carrier copies", i)
		}
	}
	for c, want := range [][]uint32{{0, 1, 4}, {3}} {
		for _, seq := range want {
			d, err := raws[c].ReceiveDatagram(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := tunneltest.Seq(d); got != seq {
				t.Fatalf("client %d got packet %d, want %d", c, got, seq)
			}
		}
		if d, ok := raws[c].TryReceiveDatagram(); ok {
			t.Fatalf("client %d got packet %d more", c, tunneltest.Seq(d))
		}
	}
}
