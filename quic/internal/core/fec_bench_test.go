package core

import (
	"testing"
	"time"
)

// BenchmarkTransferFEC moves 16 MiB from client to server as
// BenchmarkTransfer does, with FEC off and on, on a clean path and with
// one datagram in 100 lost: what protecting every packet and sending
// repairs costs in CPU and allocations, and what rebuilding lost packets
// saves. It reports the repairs sent and sources rebuilt per transfer.
func BenchmarkTransferFEC(b *testing.B) {
	for _, bc := range []struct {
		name     string
		fec      bool
		lossEach int // lose every lossEach-th client datagram; 0: none
	}{
		{"off", false, 0},
		{"on", true, 0},
		{"off/loss1%", false, 100},
		{"on/loss1%", true, 100},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var repairs, rebuilt uint64
			for b.Loop() {
				st := fecTransfer(b, bc.fec, bc.lossEach)
				repairs += st.RepairsSent
				rebuilt += st.SymbolsRecovered
			}
			b.ReportMetric(float64(repairs)/float64(b.N), "repairs/op")
			b.ReportMetric(float64(rebuilt)/float64(b.N), "rebuilt/op")
		})
	}
}

// fecTransfer runs one 16 MiB upload over a back-to-back pair with 1 ms of
// delay and returns the client's repairs sent and the server's sources
// rebuilt.
func fecTransfer(b *testing.B, withFEC bool, lossEach int) FECStats {
	const size = 16 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	ccfg, scfg := testConfigs(b, 1)
	ccfg.MaxDatagramSize, scfg.MaxDatagramSize = 1452, 1452
	if withFEC {
		ccfg.FEC, scfg.FEC = &FECConfig{}, &FECConfig{}
	}
	p := newPair(b, ccfg, scfg, time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	if lossEach > 0 {
		// Only data packets after the handshake: a lost handshake
		// packet would measure its timers, not the transfer.
		start := p.sent[0]
		p.drop = func(toServer bool, n int, _ []byte) bool {
			return toServer && n > start && (n-start)%lossEach == 0
		}
	}
	chunk := payload(64<<10, 1)
	buf := make([]byte, 64<<10)
	id, _ := p.client.OpenStream(p.now, false)
	written, got := 0, 0
	p.clientApp = func(now time.Duration, c *Conn) {
		for written < size {
			n, _ := c.StreamWrite(id, chunk[:min(len(chunk), size-written)])
			if n == 0 {
				break
			}
			written += n
		}
	}
	p.serverApp = func(now time.Duration, c *Conn) {
		for {
			n, _ := c.StreamRead(now, id, buf)
			if n == 0 {
				break
			}
			got += n
		}
	}
	p.mustRun(func() bool { return got == size }, 5*time.Minute)
	st := p.client.Stats().FEC
	st.SymbolsRecovered = p.server.Stats().FEC.SymbolsRecovered
	return st
}
