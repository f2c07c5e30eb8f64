package gateway

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/tunnel/tunneltest"
)

// BenchmarkTunnelGoodput measures what the tunnel carries from clients to
// the server over loopback, FEC on, with 1400-byte packets sent as fast
// as the clients' devices take them: over one connection, and over two
// (as flows hashed to two connections would be), to see whether a second
// connection puts a second core to use. It reports Mbit/s of IP packets
// delivered into the server's device.
//
//	go test ./gateway -run '^$' -bench TunnelGoodput -benchtime 1x
func BenchmarkTunnelGoodput(b *testing.B) {
	for _, conns := range []int{1, 2} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			for range b.N {
				mbps := measureGoodput(b, conns, 3*time.Second)
				b.ReportMetric(mbps, "Mbit/s")
			}
		})
	}
}

// measureGoodput runs conns client tunnels to one server for d and
// returns the rate of the packets the server's device received.
func measureGoodput(b *testing.B, conns int, d time.Duration) float64 {
	g := startServer(b, ServerConfig{Token: testToken})
	var delivered atomic.Uint64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			select {
			case p := <-g.dev.Written:
				delivered.Add(uint64(len(p)))
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var tunnels []*ClientTunnel
	defer func() {
		for _, ct := range tunnels {
			b.Logf("client: %+v", ct.TransportStats())
		}
		st := g.srv.Stats()
		b.Logf("server: transport %+v, sessions %+v, overload %d", st.Transport, st.Sessions, st.Tunnel.OverloadDrops)
	}()
	for range conns {
		ct, err := g.dial(b, testToken)
		if err != nil {
			b.Fatal(err)
		}
		tunnels = append(tunnels, ct)
		dev := forward(b, ct)
		pkt := tunneltest.IPv4Packet(ct.Prefixes[0].Addr(), testServer, min(1400, ct.MTU), 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case dev.Inject <- pkt:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // past slow start
	start, before := time.Now(), delivered.Load()
	time.Sleep(d)
	return float64(delivered.Load()-before) * 8 / time.Since(start).Seconds() / 1e6
}
