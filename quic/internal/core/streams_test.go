package core

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// payload returns n deterministic pseudo-random bytes.
func payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// writer feeds data into a stream as the send buffer allows, then closes it.
type writer struct {
	id     uint64
	data   []byte
	off    int
	closed bool
}

func (w *writer) pump(t testing.TB, c *Conn) {
	for w.off < len(w.data) {
		n, err := c.StreamWrite(w.id, w.data[w.off:])
		if err != nil {
			t.Fatalf("StreamWrite: %v", err)
		}
		if n == 0 {
			return
		}
		w.off += n
	}
	if !w.closed {
		if err := c.CloseWrite(w.id); err != nil {
			t.Fatalf("CloseWrite: %v", err)
		}
		w.closed = true
	}
}

func TestStreamEcho(t *testing.T) {
	ccfg, scfg := testConfigs(t, 2)
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)

	id, err := p.client.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	data := payload(1<<20, 1)
	up := &writer{id: id, data: data}
	var got, echoed []byte
	var down *writer
	clientDone := false
	p.clientApp = func(now time.Duration, c *Conn) {
		up.pump(t, c)
		if !clientDone {
			clientDone = readAll(t, now, c, id, &echoed)
		}
	}
	p.serverApp = func(now time.Duration, c *Conn) {
		if !hasEvent(p.serverEvents, EventStreamOpened) {
			return
		}
		if down == nil {
			if readAll(t, now, c, id, &got) {
				down = &writer{id: id, data: got}
			}
			return
		}
		down.pump(t, c)
	}
	p.mustRun(func() bool { return clientDone }, 30*time.Second)
	if !bytes.Equal(got, data) || !bytes.Equal(echoed, data) {
		t.Fatalf("server got %d bytes, client got back %d of %d", len(got), len(echoed), len(data))
	}
	// Both parts finished at both ends: the stream is gone.
	p.mustRun(func() bool { return len(p.client.streams.m) == 0 && len(p.server.streams.m) == 0 }, p.now+time.Second)
	if !hasEvent(p.serverEvents, EventStreamOpened) {
		t.Error("no EventStreamOpened at the server")
	}
}

func TestStreamLimitsRaised(t *testing.T) {
	ccfg, scfg := testConfigs(t, 3)
	scfg.MaxIncomingStreamsUni = 10
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	const total = 45
	opened, finished := 0, 0
	var writers []*writer
	p.clientApp = func(now time.Duration, c *Conn) {
		for opened < total {
			id, err := c.OpenStream(now, false)
			if errors.Is(err, ErrStreamLimit) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			opened++
			writers = append(writers, &writer{id: id, data: payload(3000, uint64(id))})
		}
		for _, w := range writers {
			w.pump(t, c)
		}
	}
	got := map[uint64][]byte{}
	p.serverApp = func(now time.Duration, c *Conn) {
		for _, ev := range p.serverEvents {
			if ev.Kind == EventStreamOpened {
				if _, ok := got[ev.StreamID]; !ok {
					got[ev.StreamID] = nil
				}
			}
		}
		for id := range got {
			b := got[id]
			if len(b) == 3000 {
				continue
			}
			if readAll(t, now, c, id, &b) {
				finished++
			}
			got[id] = b
		}
	}
	p.mustRun(func() bool { return finished == total }, 20*time.Second)
	for id, b := range got {
		if !bytes.Equal(b, payload(3000, id)) {
			t.Fatalf("stream %d: wrong data", id)
		}
	}
	if p.client.streams.peerMax[1] < total {
		t.Errorf("peer's uni limit %d, want at least %d after MAX_STREAMS", p.client.streams.peerMax[1], total)
	}
}

// TestWakeWritersWhenTheLimitRises: a write cut short by the send buffer
// limit waits for room; when the limit rises with nothing acknowledged (as
// Careful Resume's jump raises the congestion window it follows), the
// writer is told at once, once.
func TestWakeWritersWhenTheLimitRises(t *testing.T) {
	p := confirmedPair(t, 93)
	c := p.client
	c.cfg.MaxSendBuffer = 64 << 20
	c.cfg.MinSendBuffer = 1 << 20
	id, err := c.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	data := payload(4<<20, 3)
	n, err := c.StreamWrite(id, data)
	if err != nil || n != 1<<20 {
		t.Fatalf("wrote %d of %d: %v", n, len(data), err)
	}
	p.collectEvents()
	p.clientEvents = nil
	c.streams.wakeWriters() // the limit has not risen
	p.collectEvents()
	if hasEvent(p.clientEvents, EventStreamWritable) {
		t.Fatal("EventStreamWritable with no room")
	}
	c.cfg.MinSendBuffer = 2 << 20
	c.streams.wakeWriters()
	p.collectEvents()
	if !hasEvent(p.clientEvents, EventStreamWritable) {
		t.Fatal("no EventStreamWritable when the limit rose")
	}
	if len(c.streams.writeWaiters) != 0 {
		t.Fatalf("%d writers still waiting", len(c.streams.writeWaiters))
	}
	if n, err := c.StreamWrite(id, data[1<<20:]); err != nil || n != 1<<20 {
		t.Fatalf("wrote %d after the rise: %v", n, err)
	}
}
