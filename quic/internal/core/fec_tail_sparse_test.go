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
// flow; byteOverhead the repair data per byte of source symbols, what
// MaxOverhead bounds.
func (r sparseRun) packetOverhead() float64 {
	return float64(r.repairs) / float64(r.sources+r.repairs)
}

func (r sparseRun) byteOverhead() float64 {
	return float64(r.repairBytes) / float64(r.sourceBytes)
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
	r.sources, r.repairs, r.repairBytes, r.sourceBytes = st.SourcesSent, st.RepairsSent, st.RepairBytesSent, st.SourceBytesSent
	return r
}

// TestSimSparseFlowTailOverhead: a sparse flow that goes on, a packet
// every few milliseconds on a 30 ms path, makes a tail of almost every
// packet; its tail repairs' bytes stay within MaxOverhead (25%) of the
// source bytes sent, beside the allowance a sender starts with, where
// they took half of the packets on a clean path and three quarters on a
// lossy one when each tail got its own repairs. FEC still delivers most
// of what the path lost: without it 1% loss leaves about 990 of 1000,
// the Gilbert-Elliott path (6% loss in bursts) about 940. So do tails a
// round trip apart (a packet every 100 ms), which once took up to 80% for
// their one to four repairs each.
func TestSimSparseFlowTailOverhead(t *testing.T) {
	for _, c := range []struct {
		loss         string
		size         int
		gap          time.Duration
		minDelivered int
	}{
		{"none", 100, 10 * time.Millisecond, 1000},
		{"uniform:0.01", 100, 10 * time.Millisecond, 999},
		{"uniform:0.01", 1100, 10 * time.Millisecond, 999},
		{"uniform:0.05", 100, 10 * time.Millisecond, 991},
		{"ge:0.02,0.3", 300, 5 * time.Millisecond, 985},
		{"uniform:0.01", 100, 100 * time.Millisecond, 997},
	} {
		r := runSparseDatagrams(t, c.loss, 1000, c.size, c.gap)
		t.Logf("%s, %d B every %v: %d/%d delivered, %d sources (%d bytes), %d repairs (%d bytes): %.1f%% of packets, %.1f%% of the source bytes",
			c.loss, c.size, c.gap, r.delivered, r.sent, r.sources, r.sourceBytes, r.repairs, r.repairBytes, 100*r.packetOverhead(), 100*r.byteOverhead())
		// The bound of fec_budget.go: MaxOverhead of the source bytes
		// and the initial allowance, one full repair.
		bound := DefaultFECMaxOverhead*float64(r.sourceBytes) + fecInitialCredit*fullRepair(DefaultMaxProbeDatagramSize)
		if float64(r.repairBytes) > bound || r.delivered < c.minDelivered {
			t.Errorf("%s, %d B every %v: %d repair bytes (at most %.0f), %d delivered (at least %d)",
				c.loss, c.size, c.gap, r.repairBytes, bound, r.delivered, c.minDelivered)
		}
	}
}
