package tunnel

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/connectip/connectiptest"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// TestLentPacketsIntoTheDevice: a session that lends its packets in its
// carrier's buffers has them written into a batch device straight from
// there, in order, none lost or twice, each buffer given back after the
// write that carried it and none kept.
func TestLentPacketsIntoTheDevice(t *testing.T) {
	var carrier *connectiptest.LendingEnd
	pair := sessionPairOn(t, func(e *connectiptest.End) connectip.Carrier {
		carrier = connectiptest.Lending(t, e)
		return carrier
	})
	to := tunneltest.BatchDevice{Device: tunneltest.NewDevice(1500), Batches: make(chan int, 4096)}
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() { errs <- New(to, pair.proxy, Config{}).Run(ctx) }()
	const total, window = 3000, 500
	pkts := make([][]byte, 0, window)
	for start := 0; start < total; start += window {
		pkts = pkts[:0]
		for i := start; i < start+window; i++ {
			pkts = append(pkts, ipv4Packet("10.8.0.2", "203.0.113.1", 100+i%1000, uint32(i)))
		}
		if err := pair.client.WritePackets(pkts, func(i int, _ []byte, err error) { t.Errorf("packet %d refused: %v", i, err) }); err != nil {
			t.Fatal(err)
		}
		for i := start; i < start+window; i++ {
			p := to.Expect(t)
			if got := binary.BigEndian.Uint32(p[len(p)-4:]); got != uint32(i) || len(p) != 100+i%1000 {
				t.Fatalf("packet %d arrived as number %d of %d bytes", i, got, len(p))
			}
		}
	}
	cancel()
	if err := <-errs; err != nil {
		t.Error(err)
	}
	if n := carrier.Outstanding(); n != 0 {
		t.Errorf("%d buffers never given back", n)
	}
	if to.LargestBatch() < 2 {
		t.Errorf("every write into the device held one packet")
	}
}
