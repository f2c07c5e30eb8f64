package gateway

import (
	"context"
	"net/netip"
	"testing"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/tunnel"
)

// memBatchDevice is a memDevice that reads and writes batches, as a TUN
// interface with offloads does, so that the server's forwarder writes the
// packets its sessions lend straight from their QUIC buffers.
type memBatchDevice struct{ *memDevice }

func (d memBatchDevice) ReadPackets(bufs [][]byte, sizes []int) (int, error) {
	n, err := d.ReadPacket(bufs[0])
	if err != nil {
		return 0, err
	}
	sizes[0] = n
	got := 1
	for got < len(bufs) {
		select {
		case p := <-d.inject:
			sizes[got] = copy(bufs[got], p)
			got++
		default:
			return got, nil
		}
	}
	return got, nil
}

// WritePackets copies each packet, as the kernel does on a write: what
// reaches written is what the buffer held at the write.
func (d memBatchDevice) WritePackets(pkts [][]byte) (int, error) {
	for i, p := range pkts {
		if err := d.WritePacket(p); err != nil {
			return len(pkts) - i, err
		}
	}
	return 0, nil
}

var _ tunnel.BatchDevice = memBatchDevice{}

// TestLentPacketsThroughQUIC: over a real QUIC connection with FEC, the
// packets a client sends reach a server whose device writes batches,
// through HTTP/3's lent buffers, the mux's batches and the device write,
// each once, in order and intact, in windows smaller than the queues so
// that none may be dropped; and back the same way to a client whose
// device writes batches too.
func TestLentPacketsThroughQUIC(t *testing.T) {
	mem := newMemDevice(1500)
	mem.written = make(chan []byte, 4096)
	g := startServerDevice(t, memBatchDevice{mem}, mem, ServerConfig{Token: testToken}, testkit.ServerTLS("h3"), nil)
	ct, err := g.dial(t, testToken)
	if err != nil {
		t.Fatal(err)
	}
	dev := newMemDevice(ct.MTU)
	dev.inject, dev.written = make(chan []byte, 1024), make(chan []byte, 4096)
	fwd := tunnel.New(memBatchDevice{dev}, ct.Session, tunnel.Config{WaitWhenFull: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fwd.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("client forwarder: %v", err)
		}
	}()
	me := ct.Prefixes[0].Addr()
	const total, window = 6000, 500
	size := func(i int) int { return 200 + i%(ct.MTU-200) }
	for start := 0; start < total; start += window {
		for i := start; i < start+window; i++ {
			dev.inject <- udpPacket(me, testServer, size(i), uint32(i))
		}
		for i := start; i < start+window; i++ {
			p := g.dev.expect(t)
			if seqOf(p) != uint32(i) || len(p) != size(i) || !intact(p, me) {
				t.Fatalf("server got packet %d of %d bytes, want %d of %d, intact", seqOf(p), len(p), i, size(i))
			}
		}
		for i := start; i < start+window; i++ {
			g.dev.inject <- udpPacket(testServer, me, size(i), uint32(i))
		}
		for i := start; i < start+window; i++ {
			p := dev.expect(t)
			if seqOf(p) != uint32(i) || len(p) != size(i) || !intact(p, testServer) {
				t.Fatalf("client got packet %d of %d bytes, want %d of %d, intact", seqOf(p), len(p), i, size(i))
			}
		}
	}
}

// intact reports whether p, a packet of udpPacket's, is from src and
// holds zeros between its header and its number, as sent.
func intact(p []byte, src netip.Addr) bool {
	if len(p) < 24 || netip.AddrFrom4([4]byte(p[12:16])) != src {
		return false
	}
	for _, b := range p[20 : len(p)-4] {
		if b != 0 {
			return false
		}
	}
	return true
}
