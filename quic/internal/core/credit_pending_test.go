package core

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// TestCreditPendingAfterRead checks what a driver learns after StreamRead:
// a 4 MiB upload through a 512 KiB stream window, read 4 KiB at a time,
// needs window updates, and CreditPending reports them after the few reads
// that queued one, and not after the others; once the pair sent what the
// server had, nothing is pending any more.
func TestCreditPendingAfterRead(t *testing.T) {
	ccfg, scfg := testConfigs(t, 3)
	scfg.InitialStreamReceiveWindow = 512 << 10
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	id, err := p.client.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	data := payload(4<<20, 3)
	up := &writer{id: id, data: data}
	p.clientApp = func(_ time.Duration, c *Conn) { up.pump(t, c) }
	var got []byte
	reads, pending, done := 0, 0, false
	p.serverApp = func(now time.Duration, c *Conn) {
		if c.CreditPending() {
			t.Fatalf("at %v: a window update stayed pending after the pair sent the server's datagrams", now)
		}
		if !hasEvent(p.serverEvents, EventStreamOpened) {
			return
		}
		var buf [4096]byte
		for !done {
			n, err := c.StreamRead(now, id, buf[:])
			got = append(got, buf[:n]...)
			if err != nil && err != io.EOF {
				t.Fatalf("StreamRead: %v", err)
			}
			done = err == io.EOF
			if n == 0 {
				break
			}
			reads++
			if c.CreditPending() {
				pending++
			}
		}
	}
	p.mustRun(func() bool { return done }, 30*time.Second)
	if !bytes.Equal(got, data) {
		t.Fatalf("server read %d bytes, want %d", len(got), len(data))
	}
	if pending == 0 || pending*16 > reads {
		t.Fatalf("%d of %d reads left a window update pending, want some and at most 1 in 16", pending, reads)
	}
	t.Logf("%d of %d reads left a window update to send", pending, reads)
}

// TestCreditPendingAtEOF: the read that reaches the end of a peer's
// stream retires it, which may queue MAX_STREAMS (RFC 9000 section 4.6);
// CreditPending reports it after that read, so that a driver which wakes
// its sending side only on CreditPending, EOF or not, still raises the
// peer's limit. 45 unidirectional streams through a limit of 10 need it.
func TestCreditPendingAtEOF(t *testing.T) {
	ccfg, scfg := testConfigs(t, 3)
	scfg.MaxIncomingStreamsUni = 10
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	const total = 45
	opened := 0
	var writers []*writer
	p.clientApp = func(now time.Duration, c *Conn) {
		for opened < total {
			id, err := c.OpenStream(now, false)
			if err != nil {
				break
			}
			opened++
			writers = append(writers, &writer{id: id, data: payload(300, id)})
		}
		for _, w := range writers {
			w.pump(t, c)
		}
	}
	open, done := map[uint64]bool{}, map[uint64]bool{}
	finished, pendingAtEOF := 0, 0
	p.serverApp = func(now time.Duration, c *Conn) {
		for _, ev := range p.serverEvents {
			if ev.Kind == EventStreamOpened && !done[ev.StreamID] {
				open[ev.StreamID] = true
			}
		}
		var buf [4096]byte
		for id := range open {
			for {
				n, err := c.StreamRead(now, id, buf[:])
				if err == io.EOF {
					delete(open, id)
					done[id] = true
					finished++
					if c.CreditPending() {
						pendingAtEOF++
					}
					break
				}
				if err != nil {
					t.Fatalf("StreamRead: %v", err)
				}
				if n == 0 {
					break
				}
			}
		}
	}
	p.mustRun(func() bool { return finished == total }, 20*time.Second)
	if pendingAtEOF == 0 {
		t.Fatalf("no read at a stream's end left MAX_STREAMS pending, in %d streams", total)
	}
	if p.client.streams.peerMax[1] < total {
		t.Errorf("peer's uni limit %d, want at least %d", p.client.streams.peerMax[1], total)
	}
}
