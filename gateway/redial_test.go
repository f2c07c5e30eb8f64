package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/satquic/satquic/tunnel"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// TestForwarderRedialsOverGateway: a client Forwarder whose connection
// is lost (closed under it) asks tunnel.Config.NextSession for another;
// the tunnel dialed again to the same server carries packets both ways
// through the same device, which stayed open, and the end of the run
// closes it.
func TestForwarderRedialsOverGateway(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken})
	first, err := g.dial(t, testToken)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	dev := tunneltest.NewDevice(first.MTU)
	lost := make(chan error, 1)
	redialed := make(chan *ClientTunnel, 1)
	next := func(ctx context.Context, why error) (tunnel.Session, error) {
		lost <- why
		ct, err := g.dial(t, testToken)
		if err != nil {
			return nil, err
		}
		redialed <- ct
		return ct.Session, nil
	}
	fwd := tunnel.New(dev, first.Session, tunnel.Config{WaitWhenFull: true, NextSession: next})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fwd.Run(ctx) }()

	me := first.Prefixes[0].Addr()
	dev.Inject <- tunneltest.IPv4Packet(me, testServer, 500, 1)
	if p := g.dev.Expect(t); tunneltest.Seq(p) != 1 {
		t.Fatalf("server got packet %d, want 1", tunneltest.Seq(p))
	}
	_ = first.Close()
	select {
	case why := <-lost:
		if why == nil {
			t.Fatal("NextSession learned no reason for the loss")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the loss of the connection went unnoticed")
	}
	var second *ClientTunnel
	select {
	case second = <-redialed:
	case <-time.After(20 * time.Second):
		t.Fatal("no second tunnel")
	}
	// The server may assign the second tunnel another address. Packets
	// the device gives before the second session is up are dropped:
	// send until one passes.
	me = second.Prefixes[0].Addr()
	deadline := time.Now().Add(20 * time.Second)
	for seq := uint32(100); ; seq++ {
		dev.Inject <- tunneltest.IPv4Packet(me, testServer, 500, seq)
		select {
		case p := <-g.dev.Written:
			if tunneltest.Seq(p) < 100 {
				t.Fatalf("server got packet %d of the first tunnel after its loss", tunneltest.Seq(p))
			}
		case <-time.After(50 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no packet passed the second tunnel")
			}
			continue
		}
		break
	}
	g.dev.Inject <- tunneltest.IPv4Packet(testServer, me, 700, 7)
	if p := dev.Expect(t); tunneltest.Seq(p) != 7 {
		t.Fatalf("client got packet %d, want 7", tunneltest.Seq(p))
	}
	if dev.Closed() {
		t.Fatal("the device was closed with the first tunnel")
	}
	if st := fwd.Stats(); st.SessionsLost != 1 {
		t.Errorf("stats %+v", st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !dev.Closed() {
		t.Fatal("the device was left open")
	}
}
