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
				repairs += datagramTransfer(b, withFEC, false)
			}
			b.ReportMetric(float64(repairs)/float64(b.N), "repairs/op")
		})
	}
}

// BenchmarkDatagramTransferGive is BenchmarkDatagramTransferFEC with FEC
// on, the datagrams copied into the send queue (SendDatagram) or handed
// over in their buffers (GiveDatagrams), as a tunnel's are.
func BenchmarkDatagramTransferGive(b *testing.B) {
	for _, give := range []bool{false, true} {
		name := "copy"
		if give {
			name = "give"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				datagramTransfer(b, true, give)
			}
		})
	}
}

// datagramTransfer sends 16 MiB in 1350-byte datagrams, as many as the
// send queue takes each turn, copied or given (GiveDatagrams, the
// buffers given back filled again for the next), and returns the
// client's repairs sent.
func datagramTransfer(b *testing.B, withFEC, give bool) uint64 {
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
	batch := make([][]byte, 0, 64)
	p.clientApp = func(now time.Duration, c *Conn) {
		if give {
			batch = batch[:min(c.DatagramSendRoom(), (size-sent+dgram-1)/dgram, cap(batch))]
			for i := range batch {
				batch[i] = append(batch[i][:0], msg...)
			}
			n, err := c.GiveDatagrams(now, nil, batch)
			if err != nil {
				b.Fatal(err)
			}
			sent += n * dgram
			return
		}
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
