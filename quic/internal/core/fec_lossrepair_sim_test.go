package core

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// outageRun is what a client received of a server's bursts of datagrams
// over a path with one outage.
type outageRun struct {
	sent, got, lossRepairs, probes, rebuilt int
	// delays are the delivery delays of the datagrams, sorted.
	delays []time.Duration
}

// burstsOverOutage sends, from the server, bursts of ten 1000-byte
// datagrams (a 10 kB response through a tunnel) every 100 ms for two
// seconds, over starlink's links without their random loss and with one
// 40 ms outage of the downlink at outage. Each datagram carries its index
// and send time, so the client measures its delivery delay.
func burstsOverOutage(t *testing.T, noLossRepair bool, outage time.Duration) outageRun {
	t.Helper()
	const bursts, perBurst, size = 20, 10, 1000
	ccfg, scfg := fecConfigs(t, 77, recovery.FECAuto)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	scfg.FEC.NoLossRepair = noLossRepair
	prof, err := netsim.LookupProfile("starlink")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*netsim.LinkConfig{&prof.Down, &prof.Up} {
		l.Loss, l.Jitter, l.DelaySteps, l.Outages = "", 0, nil, nil
	}
	prof.Down.Outages = []netsim.Outage{{Start: outage, Duration: 40 * time.Millisecond}}
	var r outageRun
	var start time.Duration
	sp := newSimPair(t, prof, 7, ccfg, scfg, nil)
	sp.server.app = func(now time.Duration, c *Conn) {
		if !c.HandshakeConfirmed() {
			return
		}
		if start == 0 {
			start = now
		}
		for r.sent < bursts*perBurst && now >= start+time.Duration(r.sent/perBurst)*100*time.Millisecond {
			b := make([]byte, size)
			binary.BigEndian.PutUint32(b, uint32(r.sent))
			binary.BigEndian.PutUint64(b[4:], uint64(now))
			if err := c.SendDatagram(now, b); err != nil {
				t.Fatalf("SendDatagram: %v", err)
			}
			r.sent++
		}
	}
	seen := map[uint32]bool{}
	sp.client.app = func(now time.Duration, c *Conn) {
		for {
			b, ok := c.ReceiveDatagram()
			if !ok {
				return
			}
			if i := binary.BigEndian.Uint32(b); !seen[i] {
				seen[i] = true
				r.delays = append(r.delays, now-time.Duration(binary.BigEndian.Uint64(b[4:])))
			}
		}
	}
	sp.run(t, func() bool { return start != 0 }, 5*time.Second)
	for k := 1; k < bursts; k++ {
		// The server's application wakes for each burst.
		if err := sp.net.Run(start + time.Duration(k)*100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := sp.net.Wake(serverAddr); err != nil {
			t.Fatal(err)
		}
	}
	sp.run(t, func() bool {
		s := sp.server.conn
		return r.sent == bursts*perBurst && s.Stats().BytesInFlight == 0 && !s.dgram.hasQueued()
	}, 30*time.Second)
	st := sp.server.conn.Stats().FEC
	r.got, r.lossRepairs, r.probes = len(seen), int(st.LossRepairsSent), int(st.RepairProbesSent)
	r.rebuilt = int(sp.client.conn.Stats().FEC.SymbolsRecovered)
	slices.Sort(r.delays)
	return r
}

// TestSimLossRepairAfterOutage: a 40 ms outage takes a whole burst of
// datagrams and its tail repair. Without repairs on detected loss those
// datagrams are gone (a tunnelled TCP waits for its retransmission
// timeout); with them, the probe timeout's probe is a repair, its ACK
// shows the burst lost, and the repairs sent then rebuild every
// datagram, in about two round trips and a probe timeout. The figures are
// exact: the run is deterministic in virtual time.
func TestSimLossRepairAfterOutage(t *testing.T) {
	const outage = 1050 * time.Millisecond
	without := burstsOverOutage(t, true, outage)
	with := burstsOverOutage(t, false, outage)
	for _, r := range []struct {
		name string
		outageRun
	}{{"without", without}, {"with", with}} {
		t.Logf("%s repairs on loss: %d of %d delivered, %d repairs on loss, %d probe repairs, %d rebuilt; delay median %v, max %v",
			r.name, r.got, r.sent, r.lossRepairs, r.probes, r.rebuilt, r.delays[len(r.delays)/2], r.delays[len(r.delays)-1])
	}
	// The outage takes the burst sent at 1.077 s, ten datagrams, and its
	// tail repair. The probe timeout's two probes are repairs, their ACK
	// at 1.204 s shows the burst lost, and seven repairs follow: with the
	// next burst's tail repair, ten equations for ten unknowns.
	if without.got != 190 || without.lossRepairs != 0 || without.probes != 0 {
		t.Errorf("without repairs on loss: %d of %d delivered, %d repairs on loss, %d probes: want 190 and none",
			without.got, without.sent, without.lossRepairs, without.probes)
	}
	if with.got != with.sent || with.rebuilt != 10 || with.probes != 2 || with.lossRepairs != 7 {
		t.Errorf("with repairs on loss: %d of %d delivered, %d rebuilt, %d probe repairs, %d repairs on loss: want all, 10, 2, 7",
			with.got, with.sent, with.rebuilt, with.probes, with.lossRepairs)
	}
	if worst := with.delays[len(with.delays)-1]; worst != 152328982*time.Nanosecond {
		t.Errorf("with repairs on loss: longest delivery delay %v, want 152.328982ms (a 25 ms path)", worst)
	}
}
