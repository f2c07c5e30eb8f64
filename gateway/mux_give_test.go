package gateway

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/satquic/satquic/connectip"
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
		udpPacket(from, srcs[0], 200, 0),
		udpPacket(from, srcs[0], 300, 1),
		udpPacket(from, stranger, 100, 2),
		udpPacket(from, srcs[1], 400, 3),
		udpPacket(from, srcs[0], 500, 4),
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
			if got := seqOf(d); got != seq {
				t.Fatalf("client %d got packet %d, want %d", c, got, seq)
			}
		}
		if d, ok := raws[c].TryReceiveDatagram(); ok {
			t.Fatalf("client %d got packet %d more", c, seqOf(d))
		}
	}
}
