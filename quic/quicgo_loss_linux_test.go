package quic

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"

	"github.com/satquic/satquic/emulate"
	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
)

// lossyLink is the interop runner's transferloss case on its default
// link: 10 Mbit/s, 15 ms each way, 25-packet queue, and 2% loss in runs
// of at most 3 packets.
func lossyLink(seed uint64) netsim.LinkConfig {
	return netsim.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond, QueuePackets: 25, Loss: "burst:0.02,3", Seed: seed}
}

// startLossyRelay starts an in-process relay in front of server.
func startLossyRelay(t *testing.T, server net.Addr) *emulate.Relay {
	t.Helper()
	r, err := emulate.StartRelay(emulate.RelayConfig{Listen: "127.0.0.1:0", Upstream: server.String(), Up: lossyLink(1), Down: lossyLink(2)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st := r.Stats()
		t.Logf("relay: %d of %d lost up, %d of %d lost down (queue drops %d, %d; late %d, %d)",
			st.Up.DroppedLoss, st.Up.Offered, st.Down.DroppedLoss, st.Down.Offered, st.Up.DroppedQueue, st.Down.DroppedQueue, st.Up.Late, st.Down.Late)
		if st.Down.DroppedLoss == 0 {
			t.Error("the relay lost nothing")
		}
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// TestInteropTransferLoss downloads 2 MiB through a relay that loses 2%
// of the packets each way in bursts of up to 3, and checks its SHA-256.
// The bound is generous: on a loaded 2-core machine a lossy transfer in
// real time can take several times its usual 5-7 s.
func TestInteropTransferLoss(t *testing.T) {
	const size = 2 << 20
	t.Run("satquic to quic-go", func(t *testing.T) {
		testkit.CheckGoroutines(t)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		// A CONNECTION_CLOSE lost on the way leaves the server's
		// connection to its idle timeout: the server's Transport closes
		// it when the test ends.
		r := startLossyRelay(t, serveQuicgoHQ(t, ctx, 0))
		start := time.Now()
		c, err := DialAddr(ctx, r.Addr().String(), clientTLS(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		err = getHQ(mustOpen(t, c), "size-"+strconv.Itoa(size))
		st := c.Stats()
		if err != nil {
			t.Fatalf("%v; client stats %+v", err, st)
		}
		t.Logf("2 MiB in %v, %d packets received, %d lost by the client", time.Since(start), st.PacketsReceived, st.PacketsLost)
	})
	t.Run("quic-go to satquic", func(t *testing.T) {
		testkit.CheckGoroutines(t)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		defer wg.Wait()
		l, err := ListenAddr("127.0.0.1:0", serverTLS(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		served := make(chan *Conn, 1)
		wg.Go(func() {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			served <- c
			serveHQConn(ctx, &wg, satquicStreams(c))
		})
		r := startLossyRelay(t, l.Addr())
		start := time.Now()
		c, err := quicgo.DialAddr(ctx, r.Addr().String(), clientTLS(), &quicgo.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		s, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		server := <-served
		if err := getHQ(s, "size-"+strconv.Itoa(size)); err != nil {
			t.Fatalf("%v; server stats %+v", err, server.Stats())
		}
		st := server.Stats()
		t.Logf("2 MiB in %v, %d packets sent, %d lost and %d retransmitted by the server", time.Since(start), st.PacketsSent, st.PacketsLost, st.PacketsRetransmitted)
	})
}
