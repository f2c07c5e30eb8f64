//go:build linux

package emulate

import (
	"net"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// BenchmarkRelayUplink pushes 1400-byte datagrams through a relay with a
// 1 Gbit/s uplink, paced at about 300 Mbit/s, and reports what arrives.
func BenchmarkRelayUplink(b *testing.B) {
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	_ = sink.SetReadBuffer(16 << 20)
	r, err := StartRelay(RelayConfig{Listen: "127.0.0.1:0", Upstream: sink.LocalAddr().String(),
		Up: netsim.LinkConfig{RateBps: 1e9, QueueBytes: 4 << 20}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(r.Addr()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	got := make(chan int)
	go func() {
		buf := make([]byte, 2048)
		n := 0
		for {
			_ = sink.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			if _, err := sink.Read(buf); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	msg := make([]byte, 1400)
	const perMs = 27 // about 300 Mbit/s of 1428-byte IP packets
	b.SetBytes(1400)
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		if i%perMs == 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i/perMs) * time.Millisecond)))
		}
		if _, err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
	n := <-got
	b.ReportMetric(float64(n)/float64(b.N)*100, "%delivered")
	st := r.Stats()
	b.ReportMetric(float64(st.Up.Late), "late")
}
