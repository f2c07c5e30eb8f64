package gateway

import (
	"context"
	"net/netip"
	"testing"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/tunnel"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// TestLentPacketsThroughQUIC: over a real QUIC connection with FEC, the
// packets a client sends reach a server whose device writes batches,
// through HTTP/3's lent buffers, the mux's batches and the device write,
// each once, in order and intact, in windows smaller than the queues so
// that none may be dropped; and back the same way to a client whose
// device writes batches too.
func TestLentPacketsThroughQUIC(t *testing.T) {
	mem := tunneltest.NewDevice(1500)
	mem.Written = make(chan []byte, 4096)
	g := startServerDevice(t, tunneltest.BatchDevice{Device: mem}, mem, ServerConfig{Token: testToken}, testkit.ServerTLS("h3"), nil)
	ct, err := g.dial(t, testToken)
	if err != nil {
		t.Fatal(err)
	}
	dev := tunneltest.NewDevice(ct.MTU)
	dev.Inject, dev.Written = make(chan []byte, 1024), make(chan []byte, 4096)
	fwd := tunnel.New(tunneltest.BatchDevice{Device: dev}, ct.Session, tunnel.Config{WaitWhenFull: true})
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
			dev.Inject <- tunneltest.IPv4Packet(me, testServer, size(i), uint32(i))
		}
		for i := start; i < start+window; i++ {
			p := g.dev.Expect(t)
			if tunneltest.Seq(p) != uint32(i) || len(p) != size(i) || !intact(p, me) {
				t.Fatalf("server got packet %d of %d bytes, want %d of %d, intact", tunneltest.Seq(p), len(p), i, size(i))
			}
		}
		for i := start; i < start+window; i++ {
			g.dev.Inject <- tunneltest.IPv4Packet(testServer, me, size(i), uint32(i))
		}
		for i := start; i < start+window; i++ {
			p := dev.Expect(t)
			if tunneltest.Seq(p) != uint32(i) || len(p) != size(i) || !intact(p, testServer) {
				t.Fatalf("client got packet %d of %d bytes, want %d of %d, intact", tunneltest.Seq(p), len(p), i, size(i))
			}
		}
	}
}

// intact reports whether p, a packet of tunneltest.IPv4Packet's, is from src and
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
