package connectip_test

import (
	"context"
	"io"
	"net/netip"
	"testing"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/connectip/connectiptest"
)

// copyingCarrier is an in-memory carrier that copies each datagram out
// into the reader's buffer, as an HTTP/3 stream's ReadDatagram does.
type copyingCarrier struct{ *connectiptest.End }

func (c copyingCarrier) ReadDatagram(ctx context.Context, b []byte) (int, error) {
	d, err := c.ReceiveDatagram(ctx)
	if err != nil {
		return 0, err
	}
	return copyOut(b, d)
}

func (c copyingCarrier) TryReadDatagram(b []byte) (int, bool, error) {
	d, ok := c.TryReceiveDatagram()
	if !ok {
		return 0, false, nil
	}
	n, err := copyOut(b, d)
	return n, true, err
}

func copyOut(b, d []byte) (int, error) {
	n := copy(b, d)
	if n < len(d) {
		return n, io.ErrShortBuffer
	}
	return n, nil
}

// TestReadPacketCopyingCarrier: over a carrier that copies datagrams out,
// ReadPacket and TryReadPacket apply the same checks and counters, skip
// what they drop (a datagram longer than any IP packet among them), and
// copy the packets they forward, a b too short included.
func TestReadPacketCopyingCarrier(t *testing.T) {
	raw, b := connectiptest.Pipe(connectiptest.Config{})
	routes := []connectip.IPRoute{connectip.RouteFromPrefix(netip.MustParsePrefix("198.51.100.0/24"), 17)}
	proxy, err := connectip.NewProxy(copyingCarrier{b}, []netip.Prefix{netip.MustParsePrefix("10.7.0.7/32")}, routes, connectip.ProxyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	send := func(ctx uint64, p []byte) {
		t.Helper()
		if err := raw.SendDatagram(connectip.AppendDatagram(nil, ctx, p)); err != nil {
			t.Fatal(err)
		}
	}
	good := func(size int) []byte { return connectip.TestPacket(t, "10.7.0.7", "198.51.100.1", 17, size, 64) }
	buf := make([]byte, 1500)
	if _, ok, err := proxy.TryReadPacket(buf); ok || err != nil {
		t.Fatalf("TryReadPacket with nothing sent: %v, %v", ok, err)
	}
	send(0, connectip.TestPacket(t, "10.7.0.8", "198.51.100.1", 17, 100, 64)) // spoofed
	send(0, make([]byte, 70000))                                              // beyond any IP packet
	send(0, good(100))
	send(0, []byte{0x45, 0, 0, 1}) // not a packet
	send(0, good(200))
	send(0, good(300))
	n, err := proxy.ReadPacket(buf)
	if err != nil || n != 100 || string(buf[:n]) != string(good(100)) {
		t.Fatalf("ReadPacket: %d bytes, %v", n, err)
	}
	n, ok, err := proxy.TryReadPacket(buf)
	if !ok || err != nil || n != 200 || string(buf[:n]) != string(good(200)) {
		t.Fatalf("TryReadPacket: %d bytes, %v, %v", n, ok, err)
	}
	short := make([]byte, 50)
	if n, err := proxy.ReadPacket(short); n != 50 || err != io.ErrShortBuffer || string(short) != string(good(300)[:50]) {
		t.Fatalf("short buffer: %d, %v", n, err)
	}
	if _, ok, _ := proxy.TryReadPacket(buf); ok {
		t.Fatal("a packet more than sent")
	}
	st := proxy.Stats().Received
	want := connectip.Drops{SourceNotAllowed: 1, Malformed: 2}
	if st.Dropped != want || st.Packets != 3 || st.Bytes != 600 {
		t.Fatalf("received %+v, want 3 packets of 600 bytes and drops %+v", st, want)
	}
}

// prefixingCarrier is an in-memory carrier that joins a prefix and each
// datagram of a batch, as an HTTP/3 stream's SendPrefixedDatagrams has
// its QUIC connection do; waits counts the batches sent with
// SendPrefixedDatagramsWait.
type prefixingCarrier struct {
	*connectiptest.End
	waits *int
}

func (c prefixingCarrier) SendPrefixedDatagrams(prefix []byte, bs [][]byte) (int, error) {
	for i, b := range bs {
		if err := c.SendDatagram(append(append([]byte(nil), prefix...), b...)); err != nil {
			return i, err
		}
	}
	return len(bs), nil
}

func (c prefixingCarrier) SendPrefixedDatagramsWait(_ context.Context, prefix []byte, bs [][]byte) (int, error) {
	*c.waits++
	return c.SendPrefixedDatagrams(prefix, bs)
}

// TestWritePacketsPrefixedCarrier: over a carrier that puts the Context
// ID in front of each packet itself, WritePackets applies the same checks
// and counters, a client waits for room, and the peer, reading through a
// copying carrier, gets each packet that passed.
func TestWritePacketsPrefixedCarrier(t *testing.T) {
	a, b := connectiptest.Pipe(connectiptest.Config{})
	waits := 0
	client, proxy := sessionsOn(t, newPool(t), prefixingCarrier{a, &waits}, copyingCarrier{b}, connectip.Config{}, connectip.Config{})
	pkts := spoofedBatch(t)
	var refused []int
	if err := client.WritePackets(pkts, func(i int, _ []byte, _ error) { refused = append(refused, i) }); err != nil {
		t.Fatal(err)
	}
	checkSpoofedRefused(t, refused, waits)
	expectPackets(t, proxy, pkts[0], pkts[2])
	checkSpoofedCounted(t, client)
}

// spoofedBatch is a batch of the client at 10.8.0.1: a spoofed packet
// between two it may send, of 1100 bytes together.
func spoofedBatch(t *testing.T) [][]byte {
	return [][]byte{
		connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 17, 500, 64),
		connectip.TestPacket(t, "10.8.0.99", "203.0.113.5", 17, 100, 64), // spoofed
		connectip.TestPacket(t, "10.8.0.1", "203.0.113.6", 17, 600, 64),
	}
}

// checkSpoofedRefused checks that a client's write of spoofedBatch
// refused the spoofed packet only, after waiting once for room.
func checkSpoofedRefused(t *testing.T, refused []int, waits int) {
	t.Helper()
	if len(refused) != 1 || refused[0] != 1 || waits != 1 {
		t.Fatalf("refused %v, %d batches waited for; want [1] and 1", refused, waits)
	}
}

// checkSpoofedCounted checks the client's counters after spoofedBatch.
func checkSpoofedCounted(t *testing.T, client *connectip.Session) {
	t.Helper()
	st := client.Stats().Sent
	if st.Packets != 2 || st.Bytes != 1100 || st.Dropped != (connectip.Drops{SourceNotAllowed: 1}) {
		t.Fatalf("client sent %+v", st)
	}
}
