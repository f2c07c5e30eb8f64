package core

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// exchangeRun is what a run of small request-response exchanges over
// DATAGRAM frames measured.
type exchangeRun struct {
	done int
	// times are the exchanges' durations, starts when each began.
	times, starts  []time.Duration
	client, server FECStats
}

// Sizes of the exchange: a request, a response of eight datagrams
// (about 10 kB, as a tunnel's 10 kB HTTP response in IP packets) and an
// acknowledgement every two datagrams received, as an inner TCP sends.
const (
	exRequest, exAck, exResponse, exLast = 180, 60, 1200, 800
	exPackets                            = 8
	// exRetry is when a client asks again for what it misses, as an
	// inner TCP's retransmission timeout would.
	exRetry = 200 * time.Millisecond
)

// runExchanges runs n exchanges one after the other between a client and
// a server with fc's FEC over the starlink profile's links with uniform
// loss of 1% each way instead of its bursts and outages, in virtual time.
func runExchanges(t *testing.T, fc FECConfig, n int) exchangeRun {
	t.Helper()
	prof := profile(t, "starlink")
	for _, l := range []*netsim.LinkConfig{&prof.Up, &prof.Down} {
		l.Loss, l.Outages = "uniform:0.01", nil
	}
	return runExchangesOver(t, fc, n, prof)
}

// runExchangesOver is runExchanges over the links of prof.
func runExchangesOver(t *testing.T, fc FECConfig, n int, prof netsim.Profile) exchangeRun {
	t.Helper()
	ccfg, scfg := testConfigs(t, 21)
	for _, c := range []*Config{ccfg, scfg} {
		f := fc
		c.FEC, c.Recovery.FECPolicy, c.EnableDatagrams = &f, recovery.FECAuto, true
	}
	var (
		r        exchangeRun
		started  bool
		asked    time.Duration
		begun    time.Duration
		got      [exPackets]bool
		received int
	)
	sp := newSimPair(t, prof, 5, ccfg, scfg, nil)
	request := func(now time.Duration, c *Conn, fresh bool) {
		b := make([]byte, exRequest)
		binary.BigEndian.PutUint32(b, uint32(r.done))
		if err := c.SendDatagram(now, b); err != nil {
			t.Fatal(err)
		}
		asked = now
		if fresh {
			begun, got, received = now, [exPackets]bool{}, 0
		}
	}
	sp.server.app = func(now time.Duration, c *Conn) {
		for {
			b, ok := c.ReceiveDatagram()
			if !ok {
				return
			}
			if len(b) != exRequest {
				continue // an acknowledgement
			}
			for i := range exPackets {
				d := make([]byte, exResponse)
				if i == exPackets-1 {
					d = d[:exLast]
				}
				copy(d, b[:4])
				d[4] = byte(i)
				if err := c.SendDatagram(now, d); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	sp.client.tick = 10 * time.Millisecond
	sp.client.app = func(now time.Duration, c *Conn) {
		if !c.HandshakeConfirmed() {
			return
		}
		if !started {
			started = true
			request(now, c, true)
		}
		for {
			b, ok := c.ReceiveDatagram()
			if !ok {
				break
			}
			if int(binary.BigEndian.Uint32(b)) != r.done || got[b[4]] {
				continue
			}
			got[b[4]] = true
			if received++; received%2 == 0 || received == exPackets {
				if err := c.SendDatagram(now, make([]byte, exAck)); err != nil {
					t.Fatal(err)
				}
			}
		}
		switch {
		case received == exPackets:
			r.times = append(r.times, now-begun)
			r.starts = append(r.starts, begun)
			if r.done++; r.done < n {
				request(now, c, true)
			}
		case now-asked >= exRetry:
			request(now, c, false)
		}
	}
	sp.run(t, func() bool { return r.done == n }, time.Duration(n)*time.Second)
	r.client, r.server = sp.client.conn.Stats().FEC, sp.server.conn.Stats().FEC
	return r
}

// TestSimExchangesFECOverhead: small exchanges over the starlink
// profile's rates and delays with 1% loss each way, FEC capped at 10% as
// the tunnel's default. Each end's repair bytes stay within 10% of its
// source bytes and the one full repair a sender starts with (before the
// allowance counted bytes, the client's repairs were 68% of its bytes:
// a tail repair after nearly every acknowledgement); and the repairs
// still spare exchanges a retry: with tail protection and repairs on
// loss, 6 of 1000 are slower than one (none with NoDatagramOrder: the
// in-order hold delays a few exchanges behind a gap); with neither, 60.
func TestSimExchangesFECOverhead(t *testing.T) {
	const n = 1000
	slow := func(r exchangeRun) int {
		i := slices.IndexFunc(slices.Sorted(slices.Values(r.times)), func(d time.Duration) bool { return d >= exRetry })
		if i < 0 {
			return 0
		}
		return len(r.times) - i
	}
	with := runExchanges(t, FECConfig{MaxOverhead: 0.1}, n)
	without := runExchanges(t, FECConfig{MaxOverhead: 0.1, NoTailProtection: true, NoLossRepair: true}, n)
	for _, c := range []struct {
		name string
		r    exchangeRun
	}{{"tail protection and repairs on loss", with}, {"none", without}} {
		for _, end := range []struct {
			name string
			s    FECStats
		}{{"client", c.r.client}, {"server", c.r.server}} {
			s := end.s
			t.Logf("%s, %s: %d source bytes, %d repairs of %d bytes (%.2f%%), %d capped; %d rebuilt here",
				c.name, end.name, s.SourceBytesSent, s.RepairsSent, s.RepairBytesSent,
				100*float64(s.RepairBytesSent)/float64(s.SourceBytesSent), s.RepairsCapped, s.SymbolsRecovered)
			if bound := 0.1*float64(s.SourceBytesSent) + fecInitialCredit*fullRepair(DefaultMaxProbeDatagramSize); float64(s.RepairBytesSent) > bound {
				t.Errorf("%s, %s: %d repair bytes, more than %.0f", c.name, end.name, s.RepairBytesSent, bound)
			}
		}
		t.Logf("%s: %d exchanges, %d slower than a retry", c.name, len(c.r.times), slow(c.r))
	}
	if slow(with) >= max(slow(without), 1) {
		t.Errorf("%d exchanges slower than a retry with tail protection and repairs on loss, %d without", slow(with), slow(without))
	}
}
