package connectip_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/connectip/connectiptest"
)

// givingCarrier is an in-memory carrier that takes the buffers of a
// batch, as an HTTP/3 stream over a QUIC connection does: it sends each
// with the prefix joined to a copy, and puts in its slot the buffer taken
// before it (nil the first time); waits counts the batches sent with
// GivePrefixedDatagramsWait.
type givingCarrier struct {
	prefixingCarrier
	last *[]byte
}

func (c givingCarrier) GivePrefixedDatagrams(prefix []byte, bs [][]byte) (int, error) {
	n, err := c.SendPrefixedDatagrams(prefix, bs)
	for i := range bs[:n] {
		bs[i], *c.last = *c.last, bs[i][:0]
	}
	return n, err
}

func (c givingCarrier) GivePrefixedDatagramsWait(_ context.Context, prefix []byte, bs [][]byte) (int, error) {
	*c.waits++
	return c.GivePrefixedDatagrams(prefix, bs)
}

// TestGivePackets: over a carrier that takes buffers, GivePackets applies
// WritePackets' checks and counters, a client waits for room, the peer
// gets each packet that passed, and the batch holds what the caller owns
// after: the refused packet itself, and what the carrier gave back for
// the others.
func TestGivePackets(t *testing.T) {
	a, b := connectiptest.Pipe(connectiptest.Config{})
	waits := 0
	var last []byte
	// The packets arrive as they were sent: the test keeps no copy after
	// the carrier took them.
	client, proxy := sessionsOn(t, newPool(t), givingCarrier{prefixingCarrier{a, &waits}, &last}, copyingCarrier{b},
		connectip.Config{KeepHopLimit: true}, connectip.Config{})
	pkts := spoofedBatch(t)
	sent := [][]byte{bytes.Clone(pkts[0]), bytes.Clone(pkts[2])}
	spoofed, third := pkts[1], pkts[2]
	var refused []int
	if err := client.GivePackets(pkts, func(i int, _ []byte, _ error) { refused = append(refused, i) }); err != nil {
		t.Fatal(err)
	}
	checkSpoofedRefused(t, refused, waits)
	if pkts[0] != nil || &pkts[1][0] != &spoofed[0] || len(pkts[2]) != 0 || &last[:1][0] != &third[0] {
		t.Fatal("the batch does not hold the refused packet and what the carrier gave back")
	}
	expectPackets(t, proxy, sent...)
	checkSpoofedCounted(t, client)
}

// TestGivePacketsCopyingCarrier: over a carrier that cannot take
// buffers, GivePackets is WritePackets and leaves the batch as it was.
func TestGivePacketsCopyingCarrier(t *testing.T) {
	a, b := connectiptest.Pipe(connectiptest.Config{})
	waits := 0
	client, proxy := sessionsOn(t, newPool(t), prefixingCarrier{a, &waits}, copyingCarrier{b}, connectip.Config{}, connectip.Config{})
	pkt := connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 17, 500, 64)
	pkts := [][]byte{pkt}
	if err := client.GivePackets(pkts, func(i int, _ []byte, err error) { t.Errorf("packet %d refused: %v", i, err) }); err != nil {
		t.Fatal(err)
	}
	if &pkts[0][0] != &pkt[0] || len(pkts[0]) != 500 {
		t.Fatal("the batch changed over a copying carrier")
	}
	expectPackets(t, proxy, pkt)
}
