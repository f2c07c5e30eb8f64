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
	return burstsOverOutageShaped(t, noLossRepair, outage, burstShape{bursts: 20, perBurst: 10, size: 1000})
}

// burstShape is the server's traffic in burstsOverOutageShaped: bursts
// bursts of perBurst datagrams of size bytes, one every 100 ms.
type burstShape struct{ bursts, perBurst, size int }

// burstsOverOutageShaped is burstsOverOutage with the bursts of shape.
func burstsOverOutageShaped(t *testing.T, noLossRepair bool, outage time.Duration, shape burstShape) outageRun {
	t.Helper()
	bursts, perBurst, size := shape.bursts, shape.perBurst, shape.size
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
// datagrams and its tail repair. Without repairs on loss those
// datagrams are gone (a tunnelled TCP waits for its retransmission
// timeout); with them, the probe timeout takes the burst for lost, its
// probes are repairs over it and the rest of the ten repairs follow at
// once, which rebuild every datagram a probe timeout and a one-way
// delay after the burst. The figures are exact: the run is
// deterministic in virtual time.
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
	// tail repair. Before the probe timeout took them for lost, its two
	// probes were repairs, their ACK at 1.204 s showed the burst lost, and
	// seven repairs followed: the longest delay was 152 ms.
	if without.got != 190 || without.lossRepairs != 0 || without.probes != 0 {
		t.Errorf("without repairs on loss: %d of %d delivered, %d repairs on loss, %d probes: want 190 and none",
			without.got, without.sent, without.lossRepairs, without.probes)
	}
	if with.got != with.sent || with.rebuilt != 10 || with.probes != 0 || with.lossRepairs != 10 {
		t.Errorf("with repairs on loss: %d of %d delivered, %d rebuilt, %d probe repairs, %d repairs on loss: want all, 10, 0, 10",
			with.got, with.sent, with.rebuilt, with.probes, with.lossRepairs)
	}
	// The source packets are padded to a repair's size (fec_pad.go): a
	// few bytes more on the link than without, 3 us later here.
	if worst := with.delays[len(with.delays)-1]; worst != 102484105*time.Nanosecond {
		t.Errorf("with repairs on loss: longest delivery delay %v, want 102.484105ms (a 25 ms path)", worst)
	}
}

// TestSimLossRepairAfterOutageFullBurst: the outage takes a burst of 40
// datagrams that fill their packets, as five 10 kB responses through a
// tunnel do. The probe timeout's probes are held to the base size
// (pmtuState.budget), which a repair over such datagrams does not fit:
// they are PINGs, and the repairs go in the full-size packets right after
// them. Before the probe timeout took the burst for lost, nothing was
// repaired until the PINGs' ACK declared it lost, and then only what the
// allowance and a debt of 8 repairs paid for: 28 datagrams were given up,
// and the rest waited 231 ms. Now all 40 are rebuilt, the last 126 ms
// after it was sent.
func TestSimLossRepairAfterOutageFullBurst(t *testing.T) {
	r := burstsOverOutageShaped(t, false, 1050*time.Millisecond, burstShape{bursts: 20, perBurst: 40, size: 1150})
	t.Logf("%d of %d delivered, %d repairs on loss, %d probe repairs, %d rebuilt; delay max %v",
		r.got, r.sent, r.lossRepairs, r.probes, r.rebuilt, r.delays[len(r.delays)-1])
	if r.got != r.sent || r.rebuilt != 40 || r.lossRepairs != 40 {
		t.Errorf("%d of %d delivered, %d rebuilt, %d repairs on loss: want all, 40 and 40", r.got, r.sent, r.rebuilt, r.lossRepairs)
	}
	if worst := r.delays[len(r.delays)-1]; worst != 126486960*time.Nanosecond {
		t.Errorf("longest delivery delay %v, want 126.48696ms", worst)
	}
}

// TestSimExchangesOverOutages: small exchanges (a request, a 10 kB
// response in eight datagrams) one after the other over the starlink
// profile, its bursts of loss and its 40 ms outage every 15 s included.
// The exchanges an outage hits end before the client would ask again
// (exRetry, 200 ms, as an inner TCP's retransmission timeout): the probe
// timeout takes the burst the outage took for lost and repairs it at
// once. Before, they waited for the probes' ACK to declare the burst lost
// and took up to 249 ms. The run is deterministic in virtual time. One
// exchange's whole response leaves in the first milliseconds of the
// outage at 60 s: the probe timeout's two probes are PINGs (they keep
// to the base size, and a repair is larger), and of the eight repairs due
// the congestion window let six go with them; the last two waited for the
// probes' ACK, 236 ms in all, until two repairs went past the window in
// place of the probes (lossRepair.exempt).
func TestSimExchangesOverOutages(t *testing.T) {
	r := runExchangesOver(t, FECConfig{MaxOverhead: 0.1}, 1400, profile(t, "starlink"))
	var hit []time.Duration
	for i, start := range r.starts {
		// An exchange started up to 50 ms before an outage, or during it.
		if at := (start + 50*time.Millisecond) % (15 * time.Second); at < 90*time.Millisecond && start > time.Second {
			hit = append(hit, r.times[i])
		}
	}
	slices.Sort(hit)
	t.Logf("%d exchanges hit by an outage, taking %v", len(hit), hit)
	if len(hit) < 5 {
		t.Fatalf("%d exchanges hit by an outage, want at least 5", len(hit))
	}
	if worst := hit[len(hit)-1]; worst >= exRetry {
		t.Errorf("an exchange hit by an outage took %v, want less than %v", worst, exRetry)
	}
}
