package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// sparseRun is what a sparse flow of datagrams cost and delivered.
type sparseRun struct {
	sent, delivered          int
	sources, repairs         uint64
	repairBytes, sourceBytes uint64
}

// packetOverhead is the repairs' share of the packets that carried the
// flow; byteOverhead the repair data's share of the data.
func (r sparseRun) packetOverhead() float64 {
	return float64(r.repairs) / float64(r.sources+r.repairs)
}

func (r sparseRun) byteOverhead() float64 {
	return float64(r.repairBytes) / float64(r.sourceBytes+r.repairBytes)
}

// runSparseDatagrams sends n datagrams of size bytes from the server, one
// every gap, over p2p (40 ms RTT) with the downlink loss spec: the flow of
// a tunnel carrying a voice call or a trickle of small requests, where the
// sender is idle after almost every packet.
func runSparseDatagrams(t *testing.T, loss string, n, size int, gap time.Duration) sparseRun {
	t.Helper()
	ccfg, scfg := fecConfigs(t, 77, recovery.FECAuto)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	var r sparseRun
	sp := newSimPair(t, lossOnly(t, loss), 43, ccfg, scfg, nil)
	sp.server.tick = gap
	var next time.Duration
	sp.server.app = func(now time.Duration, c *Conn) {
		if !c.HandshakeConfirmed() || r.sent == n || now < next {
			return
		}
		if err := c.SendDatagram(now, numbered(r.sent, size)); err != nil {
			t.Fatalf("SendDatagram %d: %v", r.sent, err)
		}
		r.sent++
		next = now + gap
	}
	sp.client.app = func(_ time.Duration, c *Conn) {
		for {
			if _, ok := c.ReceiveDatagram(); !ok {
				return
			}
			r.delivered++
		}
	}
	limit := 2*time.Duration(n)*gap + 30*time.Second
	if err := sp.net.RunUntil(func() bool {
		s := sp.server.conn
		return r.sent == n && s != nil && s.Stats().BytesInFlight == 0 && !s.dgram.hasQueued()
	}, limit); err != nil {
		t.Fatalf("%v: %d of %d sent, server %+v", err, r.sent, n, sp.server.conn.Stats())
	}
	st := sp.server.conn.Stats().FEC
	r.sources, r.repairs, r.repairBytes = st.SourcesSent, st.RepairsSent, st.RepairBytesSent
	r.sourceBytes = uint64(r.sent * size)
	return r
}

// TestSimSparseFlowTailOverhead: a sparse flow that goes on, a packet
// every few milliseconds on a 30 ms path, makes a tail of almost every
// packet; its tail repairs stay within MaxOverhead (25%) of the packets
// sent, where they took half of them on a clean path and three quarters
// on a lossy one (each tail got its own repairs), and FEC still delivers
// what the path lost. Tails a round trip apart (a packet every 100 ms)
// keep one to four cheap repairs each, as a request's tail does.
func TestSimSparseFlowTailOverhead(t *testing.T) {
	for _, c := range []struct {
		loss         string
		size         int
		gap          time.Duration
		maxOverhead  float64
		minDelivered int
	}{
		{"none", 100, 10 * time.Millisecond, 0.26, 1000},
		{"uniform:0.01", 100, 10 * time.Millisecond, 0.26, 998},
		{"uniform:0.01", 1100, 10 * time.Millisecond, 0.26, 998},
		{"uniform:0.05", 100, 10 * time.Millisecond, 0.26, 990},
		{"ge:0.02,0.3", 300, 5 * time.Millisecond, 0.26, 995},
		{"uniform:0.01", 100, 100 * time.Millisecond, 0.8, 998},
	} {
		r := runSparseDatagrams(t, c.loss, 1000, c.size, c.gap)
		t.Logf("%s, %d B every %v: %d/%d delivered, %d sources, %d repairs: %.1f%% of packets, %.1f%% of bytes",
			c.loss, c.size, c.gap, r.delivered, r.sent, r.sources, r.repairs, 100*r.packetOverhead(), 100*r.byteOverhead())
		if r.packetOverhead() > c.maxOverhead || r.delivered < c.minDelivered {
			t.Errorf("%s, %d B every %v: repairs %.3f of the packets (at most %.2f), %d delivered (at least %d)",
				c.loss, c.size, c.gap, r.packetOverhead(), c.maxOverhead, r.delivered, c.minDelivered)
		}
	}
}
