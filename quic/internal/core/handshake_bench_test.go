package core

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
)

// The cost of a whole connection in the core, each side: a full handshake
// with the TLS configuration of the TLS floor (tlsfloor_bench_test.go),
// one request of 30 bytes answered with 1 KiB on a stream, and a close,
// back to back with no delay but a millisecond per flight. A side's time
// less the floor's is what the core adds to crypto/tls for a connection.

// benchEnd is one side of the connection with the time spent in its calls
// and the datagrams on their way to it.
type benchEnd struct {
	c     *Conn
	spent time.Duration
	in    []Datagram
	// bufs are the datagram buffers of what this side sends, reused
	// every flight.
	bufs [][]byte
	// addr is the side's address, the source of what it sends.
	addr netip.AddrPort
}

// flush takes every datagram c has to send at now into the peer's inbox;
// it returns how many there were.
func (e *benchEnd) flush(now time.Duration, peer *benchEnd) int {
	n := 0
	for {
		if n == len(e.bufs) {
			e.bufs = append(e.bufs, make([]byte, 0, 1500))
		}
		start := time.Now()
		d, ok := e.c.NextDatagram(now, e.bufs[n][:0])
		e.spent += time.Since(start)
		if !ok {
			return n
		}
		e.bufs[n] = d.Data
		d.Addr = e.addr
		peer.in = append(peer.in, d)
		n++
	}
}

// step gives the side its inbox at now.
func (e *benchEnd) step(now time.Duration) {
	start := time.Now()
	e.c.Step(now, e.in)
	e.spent += time.Since(start)
	e.in = e.in[:0]
}

// benchConn is the connection between two benchEnds.
type benchConn struct {
	b              testing.TB
	now            time.Duration
	client, server benchEnd
	scfg           *Config
	// created is the heap the server allocated for its first flight:
	// NewServerConn and the Step of the client's first datagram.
	created uint64
	// measureCreate: read the heap statistics around the server's
	// creation (which stops the world, so not in the timed runs).
	measureCreate bool
}

func newBenchConn(b testing.TB, scfg *Config) *benchConn {
	return &benchConn{b: b, scfg: scfg, client: benchEnd{addr: clientAddr}, server: benchEnd{addr: serverAddr}}
}

// exchange moves flights both ways, a millisecond of virtual time per
// flight, and runs the timers when neither side has anything to send,
// until done holds and neither side has anything to send.
func (bc *benchConn) exchange(done func() bool) {
	for range 256 {
		sent := bc.client.flush(bc.now, &bc.server)
		if bc.server.c == nil && sent > 0 {
			bc.createServer()
		}
		bc.now += time.Millisecond
		if bc.server.c != nil && len(bc.server.in) > 0 {
			bc.server.step(bc.now)
		}
		if bc.server.c != nil {
			sent += bc.server.flush(bc.now, &bc.client)
		}
		bc.now += time.Millisecond
		if len(bc.client.in) > 0 {
			bc.client.step(bc.now)
		}
		if sent > 0 {
			continue
		}
		if done() {
			return
		}
		bc.runTimers()
	}
	bc.b.Fatal("the connection did not get there")
}

// runTimers moves the time to the first side's timer and steps both.
func (bc *benchConn) runTimers() {
	next, any := time.Duration(0), false
	for _, e := range []*benchEnd{&bc.client, &bc.server} {
		if e.c == nil {
			continue
		}
		if t, ok := e.c.NextTimer(bc.now); ok && (!any || t < next) {
			next, any = t, true
		}
	}
	if !any {
		bc.b.Fatalf("no timer and nothing to send (client: %v, server: %v)", bc.client.c.Err(), serverErr(bc.server.c))
	}
	bc.now = max(bc.now, next)
	bc.client.step(bc.now)
	if bc.server.c != nil {
		bc.server.step(bc.now)
	}
}

// createServer makes the server of the client's first Initial and lets
// it read that datagram.
func (bc *benchConn) createServer() {
	var before runtime.MemStats
	if bc.measureCreate {
		runtime.ReadMemStats(&before)
	}
	first := bc.server.in[0]
	start := time.Now()
	info, err := PeekInitial(first.Data)
	if err != nil {
		bc.b.Fatal(err)
	}
	bc.server.c, err = NewServerConn(bc.scfg, bc.now, ServerParams{RemoteAddr: clientAddr, OriginalDestConnID: info.DstConnID, Version: info.Version})
	if err != nil {
		bc.b.Fatal(err)
	}
	bc.server.c.Step(bc.now, bc.server.in)
	bc.server.spent += time.Since(start)
	bc.server.in = bc.server.in[:0]
	if bc.measureCreate {
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		bc.created = after.TotalAlloc - before.TotalAlloc
	}
}

// benchRequest is the request's size, benchResponse the answer's.
const benchRequest, benchResponse = 30, 1024

// run makes one connection: handshake, request, answer, close.
func (bc *benchConn) run(ccfg *Config) {
	start := time.Now()
	c, err := NewClientConn(ccfg, bc.now, serverAddr)
	bc.client.spent += time.Since(start)
	if err != nil {
		bc.b.Fatal(err)
	}
	bc.client.c, bc.server.c = c, nil
	bc.exchange(func() bool {
		return c.HandshakeConfirmed() && bc.server.c != nil && bc.server.c.HandshakeConfirmed()
	})
	bc.request()
	start = time.Now()
	c.Close(bc.now, 0, "")
	bc.client.spent += time.Since(start)
	bc.exchange(func() bool { return true })
	bc.drain()
}

// request sends the request, answers it and reads the answer.
func (bc *benchConn) request() {
	var buf [benchResponse]byte
	c, s := bc.client.c, bc.server.c
	start := time.Now()
	id, err := c.OpenStream(bc.now, true)
	if err == nil {
		_, err = c.StreamWrite(id, buf[:benchRequest])
	}
	if err == nil {
		err = c.CloseWrite(id)
	}
	bc.client.spent += time.Since(start)
	if err != nil {
		bc.b.Fatal(err)
	}
	bc.exchange(func() bool { return s.StreamReadable(id) == benchRequest })
	start = time.Now()
	n, err := s.StreamRead(bc.now, id, buf[:])
	if err == nil || n == benchRequest {
		_, err = s.StreamWrite(id, buf[:benchResponse])
	}
	if err == nil {
		err = s.CloseWrite(id)
	}
	bc.server.spent += time.Since(start)
	if err != nil || n != benchRequest {
		bc.b.Fatalf("server read %d bytes (%v)", n, err)
	}
	bc.exchange(func() bool { return c.StreamReadable(id) == benchResponse })
	start = time.Now()
	n, _ = c.StreamRead(bc.now, id, buf[:])
	bc.client.spent += time.Since(start)
	if n != benchResponse {
		bc.b.Fatalf("client read %d bytes", n)
	}
	bc.exchange(func() bool { return true })
}

// drain runs both sides' timers until both are closed (the closing and
// draining periods, RFC 9000 section 10.2).
func (bc *benchConn) drain() {
	for _, e := range []*benchEnd{&bc.client, &bc.server} {
		for range 16 {
			if e.c.Closed() {
				break
			}
			t, ok := e.c.NextTimer(bc.now)
			if !ok {
				break
			}
			bc.now = max(bc.now, t)
			e.step(bc.now)
		}
		if !e.c.Closed() {
			bc.b.Fatal("a side did not close")
		}
		e.c.Release()
	}
}

// BenchmarkConnection measures a whole connection in the core, each side
// (client-us/op, server-us/op: the time in that side's calls, TLS
// included), the process's CPU for both (cpu-us/op, garbage collection
// included, which a busy machine disturbs less than the time in the
// calls), the heap both sides allocate (B/op, allocs/op), and
// server-create-B, the heap a server allocates when a client's first
// Initial creates it and it answers (the cost an unvalidated client can
// impose on a server, measured once before the timed runs).
func BenchmarkConnection(b *testing.B) {
	ccfg, scfg := testConfigs(b, 1)
	ccfg.TLS, scfg.TLS = floorConfigs(floorCert(b))
	ccfg.Rand, scfg.Rand = nil, nil
	probe := newBenchConn(b, scfg)
	probe.measureCreate = true
	probe.run(ccfg)
	bc := newBenchConn(b, scfg)
	b.ReportAllocs()
	cpu := testkit.ProcessCPU()
	for b.Loop() {
		bc.run(ccfg)
	}
	cpu = testkit.ProcessCPU() - cpu
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-us/op")
	b.ReportMetric(float64(bc.client.spent.Microseconds())/n, "client-us/op")
	b.ReportMetric(float64(bc.server.spent.Microseconds())/n, "server-us/op")
	b.ReportMetric(float64(probe.created), "server-create-B")
}
