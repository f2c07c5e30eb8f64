package quic

import (
	"context"
	"io"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/memnet"
)

// TestLossyDownload downloads over a link that loses 2% of the packets
// each way: the driver carries the retransmissions and the data arrive
// whole.
func TestLossyDownload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := netsim.LinkConfig{RateBps: 50e6, Delay: 25 * time.Millisecond, Loss: "uniform:0.02"}
		e := newMemEnv(t, link, nil)
		c, s := e.connect(nil)
		const size = 5 << 20
		data := testkit.Payload(size, 12)
		go func() {
			st, err := s.OpenUniStream()
			if err != nil {
				return
			}
			_, _ = st.Write(data)
			_ = st.Close()
		}()
		st, err := c.AcceptUniStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n, got, err := testkit.ReadAllSum(st)
		if err != nil || n != size || got != sum(data) {
			t.Fatalf("%d of %d bytes, err %v", n, size, err)
		}
		ss := s.Stats()
		if ss.PacketsLost == 0 || ss.PacketsRetransmitted == 0 || ss.StreamBytesRetransmitted == 0 {
			t.Errorf("2%% loss, yet the server reports %d lost, %d retransmitted, %d bytes again",
				ss.PacketsLost, ss.PacketsRetransmitted, ss.StreamBytesRetransmitted)
		}
		_ = c.CloseWithError(0, "")
	})
}

// TestGEODownload runs a download over the "geo" profile (50 Mbit/s down,
// 650 ms round trip) with the zero Config: the defaults must carry a
// satellite path.
func TestGEODownload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := netsim.LookupProfile("geo")
		if err != nil {
			t.Fatal(err)
		}
		n := memnet.New(memnet.Config{Seed: 1})
		defer n.Close()
		if _, err := n.AddProfilePath(memClientAddr.Addr(), memServerAddr.Addr(), prof); err != nil {
			t.Fatal(err)
		}
		spc, _ := n.Listen(memServerAddr)
		cpc, _ := n.Listen(memClientAddr)
		l, err := Listen(spc, serverTLS(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		const size = 20 << 20
		data := testkit.Payload(size, 11)
		ctx := context.Background()
		go func() {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			st, err := c.OpenUniStream()
			if err != nil {
				return
			}
			_, _ = st.Write(data)
			_ = st.Close()
		}()
		start := time.Now()
		c, err := Dial(ctx, cpc, net.UDPAddrFromAddrPort(memServerAddr), clientTLS(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		st, err := c.AcceptUniStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n2, got, err := testkit.ReadAllSum(io.Reader(st))
		if err != nil || n2 != size || got != sum(data) {
			t.Fatalf("%d of %d bytes, err %v", n2, size, err)
		}
		elapsed := time.Since(start)
		// The link alone needs 3.4 s; the handshake and slow start to a
		// 4 MB window take about ten round trips more. Receive windows
		// that did not grow (512 KiB a round trip) would need 26 s.
		limit := time.Duration(float64(size*8)/prof.Down.RateBps*float64(time.Second)) + 15*prof.RTT()
		st2 := c.Stats()
		t.Logf("20 MiB over %s in %v (limit %v): %.1f Mbit/s, srtt %v, lost %d", prof.Name, elapsed, limit,
			float64(size)*8/elapsed.Seconds()/1e6, st2.SmoothedRTT, st2.PacketsLost)
		if elapsed > limit {
			t.Errorf("took %v, more than %v", elapsed, limit)
		}
	})
}
