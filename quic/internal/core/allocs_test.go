package core

import (
	"crypto/tls"
	"runtime"
	"testing"
	"time"
)

// lockstep drives a sender and a receiver Conn in fixed steps of virtual
// time with preallocated datagram buffers, so that whatever allocates in a
// step is the core's own doing (the pair harness and the simulator
// allocate every datagram). Each half step is one end's turn of the
// calling protocol: Step, the application, NextDatagram.
type lockstep struct {
	t          testing.TB
	now        time.Duration
	snd, rcv   *Conn
	id         uint64
	data, acks datagrams
	chunk, out []byte
	moved      int
}

// datagrams holds the datagrams of one direction between two phases; the
// Data of each slot is its buffer, reused from step to step.
type datagrams struct {
	d [64]Datagram
	n int
}

// receive hands c the datagrams of d and runs its timers.
func (l *lockstep) receive(c *Conn, d *datagrams) {
	c.Step(l.now, d.d[:d.n])
	d.n = 0
}

// transmit takes up to len(d.d) datagrams from c, each from c's address,
// and drains its events.
func (l *lockstep) transmit(c *Conn, d *datagrams) {
	from := serverAddr
	if c.IsClient() {
		from = clientAddr
	}
	for d.n < len(d.d) {
		dg, ok := c.NextDatagram(l.now, d.d[d.n].Data[:0])
		if !ok {
			break
		}
		dg.Addr = from
		d.d[d.n] = dg
		d.n++
	}
	for {
		if _, ok := c.PollEvent(); !ok {
			break
		}
	}
}

// sendHalf is the sender's part of a step: it takes the receiver's
// acknowledgements, writes, and sends STREAM frames. It writes less than a
// step carries, so that its buffers and window stop growing.
func (l *lockstep) sendHalf() {
	l.receive(l.snd, &l.acks)
	if _, err := l.snd.StreamWrite(l.id, l.chunk); err != nil {
		l.t.Fatal(err)
	}
	l.transmit(l.snd, &l.data)
	l.now += 50 * time.Microsecond
}

// recvHalf is the receiver's part: it reassembles the STREAM frames,
// reads them, and sends acknowledgements and flow control updates.
func (l *lockstep) recvHalf() {
	l.receive(l.rcv, &l.data)
	for {
		n, err := l.rcv.StreamRead(l.now, l.id, l.out)
		if err != nil {
			l.t.Fatal(err)
		}
		if n == 0 {
			break
		}
		l.moved += n
	}
	l.transmit(l.rcv, &l.acks)
	l.now += 50 * time.Microsecond
}

// TestSteadyStateAllocs checks that moving stream data allocates nothing
// once a transfer runs: not the send buffers and STREAM frames of the
// sender, not the reassembly and reads of the receiver, not the packets,
// their frame records, or the ACK frames either way.
func TestSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts need the warm-up")
	}
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop blocks")
	}
	for _, tc := range []struct {
		name   string
		upload bool
		resume bool
	}{{"client sends", true, false}, {"server sends", false, false}, {"server sends with Careful Resume", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ccfg, scfg := testConfigs(t, 3)
			if tc.resume {
				// The server checks at every ACK whether its path state
				// is worth sending to a client that keeps tickets.
				withCarefulResume(t, ccfg, scfg, 1)
				ccfg.TLS.ClientSessionCache = tls.NewLRUClientSessionCache(1)
			}
			l := lockstepFrom(t, tc.upload, ccfg, scfg)
			// Warm up: windows, rings and pools reach their working size.
			for range 2000 {
				l.sendHalf()
				l.recvHalf()
			}
			if l.moved < 32<<20 {
				t.Fatalf("warm-up moved only %d bytes", l.moved)
			}
			if s := l.snd.Stats().CarefulResume; tc.resume && (!s.Negotiated || s.BDPFramesSent == 0) {
				t.Fatalf("the server sent no path state: %+v", s)
			}
			before := l.moved
			var ms runtime.MemStats
			var sendAllocs, recvAllocs uint64
			const runs = 300
			avg := testing.AllocsPerRun(runs, func() {
				runtime.ReadMemStats(&ms)
				m0 := ms.Mallocs
				l.sendHalf()
				runtime.ReadMemStats(&ms)
				m1 := ms.Mallocs
				l.recvHalf()
				runtime.ReadMemStats(&ms)
				sendAllocs += m1 - m0
				recvAllocs += ms.Mallocs - m1
			})
			if moved := l.moved - before; moved < runs*len(l.chunk) {
				t.Fatalf("measured steps moved %d bytes, want %d", moved, runs*len(l.chunk))
			}
			// A sync.Pool emptied by a collection during the run may
			// allocate a block now and then; that averages to zero.
			if avg != 0 {
				t.Errorf("%.1f allocations per step (sending side %d, receiving side %d over %d steps)", avg, sendAllocs, recvAllocs, runs+1)
			}
		})
	}
}
