package core

import (
	"testing"
	"time"
)

// BenchmarkTransfer moves 16 MiB from client to server over a
// back-to-back pair with 1 ms of delay: the core's CPU cost per byte, both
// ends and TLS included.
func BenchmarkTransfer(b *testing.B) {
	const size = 16 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	chunk := payload(64<<10, 1)
	buf := make([]byte, 64<<10)
	for b.Loop() {
		ccfg, scfg := testConfigs(b, 1)
		ccfg.MaxDatagramSize, scfg.MaxDatagramSize = 1452, 1452
		p := newPair(b, ccfg, scfg, time.Millisecond)
		p.mustRun(p.confirmed, time.Second)
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
		p.mustRun(func() bool { return got == size }, time.Minute)
	}
}
