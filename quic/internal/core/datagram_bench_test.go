package core

import (
	"testing"
	"time"
)

// BenchmarkDatagramTransferFEC moves 16 MiB of tunnel-sized DATAGRAM
// frames from client to server over a back-to-back pair with 1 ms of
// delay and no loss, with FEC off and on: what a tunnel's packets cost in
// the core at each end (packet building and protection, recovery, and
// with FEC the encoder's and decoder's windows and the repairs of tails),
// without sockets. It reports the repairs sent per transfer.
func BenchmarkDatagramTransferFEC(b *testing.B) {
	for _, withFEC := range []bool{false, true} {
		name := "off"
		if withFEC {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var repairs uint64
			for b.Loop() {
				repairs += datagramTransfer(b, withFEC)
			}
			b.ReportMetric(float64(repairs)/float64(b.N), "repairs/op")
		})
	}
}

// datagramTransfer sends 16 MiB in 1350-byte datagrams, as many as the
// send queue takes each turn, and returns the client's repairs sent.
func datagramTransfer(b *testing.B, withFEC bool) uint64 {
	const size, dgram = 16 << 20, 1350
	b.SetBytes(size)
	b.ReportAllocs()
	ccfg, scfg := testConfigs(b, 1)
	ccfg.MaxDatagramSize, scfg.MaxDatagramSize = 1452, 1452
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	ccfg.DatagramSendQueue, scfg.DatagramReceiveQueue = 1024, 4096
	if withFEC {
		ccfg.FEC, scfg.FEC = &FECConfig{}, &FECConfig{}
	}
	p := newPair(b, ccfg, scfg, time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	msg := payload(dgram, 1)
	sent, got := 0, 0
	p.clientApp = func(now time.Duration, c *Conn) {
		for room := c.DatagramSendRoom(); room > 0 && sent < size; room-- {
			if err := c.SendDatagram(now, msg); err != nil {
				b.Fatal(err)
			}
			sent += dgram
		}
	}
	p.serverApp = func(now time.Duration, c *Conn) {
		for {
			d, ok := c.ReceiveDatagram()
			if !ok {
				break
			}
			got += len(d)
			c.RecycleDatagram(d)
		}
	}
	p.mustRun(func() bool { return got >= size }, 5*time.Minute)
	return p.client.Stats().FEC.RepairsSent
}
