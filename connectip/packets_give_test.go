package connectip_test

import (
	"context"
	"net/netip"
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
	proxy, err := connectip.NewProxy(copyingCarrier{b}, nil, everywhere, connectip.ProxyConfig{Pool: newPool(t)})
	if err != nil {
		t.Fatal(err)
	}
	waits := 0
	var last []byte
	client, err := connectip.NewClient(givingCarrier{prefixingCarrier{a, &waits}, &last}, connectip.ClientConfig{
		// The packets arrive as they were sent: the test keeps no copy
		// after the carrier took them.
		Config:           connectip.Config{KeepHopLimit: true},
		RequestAddresses: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); proxy.Close() })
	pkts := [][]byte{
		connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 17, 500, 64),
		connectip.TestPacket(t, "10.8.0.99", "203.0.113.5", 17, 100, 64), // spoofed
		connectip.TestPacket(t, "10.8.0.1", "203.0.113.6", 17, 600, 64),
	}
	sent := [][]byte{append([]byte(nil), pkts[0]...), append([]byte(nil), pkts[2]...)}
	spoofed, third := pkts[1], pkts[2]
	var refused []int
	if err := client.GivePackets(pkts, func(i int, _ []byte, _ error) { refused = append(refused, i) }); err != nil {
		t.Fatal(err)
	}
	if len(refused) != 1 || refused[0] != 1 || waits != 1 {
		t.Fatalf("refused %v, %d batches waited for; want [1] and 1", refused, waits)
	}
	if pkts[0] != nil || &pkts[1][0] != &spoofed[0] || len(pkts[2]) != 0 || &last[:1][0] != &third[0] {
		t.Fatal("the batch does not hold the refused packet and what the carrier gave back")
	}
	buf := make([]byte, 2000)
	for _, want := range sent {
		n, err := proxy.ReadPacket(buf)
		if err != nil || string(buf[:n]) != string(want) {
			t.Fatalf("proxy read %d bytes, %v; want the %d-byte packet", n, err, len(want))
		}
	}
	st := client.Stats().Sent
	if st.Packets != 2 || st.Bytes != 1100 || st.Dropped != (connectip.Drops{SourceNotAllowed: 1}) {
		t.Fatalf("client sent %+v", st)
	}
}

// TestGivePacketsCopyingCarrier: over a carrier that cannot take
// buffers, GivePackets is WritePackets and leaves the batch as it was.
func TestGivePacketsCopyingCarrier(t *testing.T) {
	a, b := connectiptest.Pipe(connectiptest.Config{})
	proxy, err := connectip.NewProxy(copyingCarrier{b}, nil, everywhere, connectip.ProxyConfig{Pool: newPool(t)})
	if err != nil {
		t.Fatal(err)
	}
	waits := 0
	client, err := connectip.NewClient(prefixingCarrier{a, &waits}, connectip.ClientConfig{
		RequestAddresses: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/32")},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); proxy.Close() })
	pkt := connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 17, 500, 64)
	pkts := [][]byte{pkt}
	if err := client.GivePackets(pkts, func(i int, _ []byte, err error) { t.Errorf("packet %d refused: %v", i, err) }); err != nil {
		t.Fatal(err)
	}
	if &pkts[0][0] != &pkt[0] || len(pkts[0]) != 500 {
		t.Fatal("the batch changed over a copying carrier")
	}
	buf := make([]byte, 2000)
	if n, err := proxy.ReadPacket(buf); err != nil || n != 500 {
		t.Fatalf("proxy read %d bytes, %v", n, err)
	}
}
