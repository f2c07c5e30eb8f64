package core

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// TestStreamMemoryFromDriver: with SetStreamMemory, every stream either
// end creates, its own or the peer's, lives in the memory the driver's
// function gave for its ID, and carries its data as one the core
// allocated would.
func TestStreamMemoryFromDriver(t *testing.T) {
	ccfg, scfg := testConfigs(t, 2)
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	// The pair makes the server's connection with the client's first
	// datagram.
	p.mustRun(p.confirmed, 5*time.Second)
	given := map[*Conn]map[uint64]*StreamMemory{p.client: {}, p.server: {}}
	for _, c := range []*Conn{p.client, p.server} {
		c.SetStreamMemory(func(id uint64) *StreamMemory {
			if given[c][id] != nil {
				t.Errorf("stream %d given memory twice", id)
			}
			m := new(StreamMemory)
			given[c][id] = m
			return m
		})
	}

	var ids []uint64
	for _, bidi := range []bool{true, false, true} {
		id, err := p.client.OpenStream(p.now, bidi)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	data := payload(3000, 7)
	writers := make([]*writer, len(ids))
	got := make([][]byte, len(ids))
	done := make([]bool, len(ids))
	for i, id := range ids {
		writers[i] = &writer{id: id, data: data}
	}
	p.clientApp = func(now time.Duration, c *Conn) {
		for _, w := range writers {
			w.pump(t, c)
		}
	}
	p.serverApp = func(now time.Duration, c *Conn) {
		for i, id := range ids {
			if !done[i] && c.streams.m[id] != nil {
				done[i] = readAll(t, now, c, id, &got[i])
			}
		}
	}
	p.mustRun(func() bool { return !slices.Contains(done, false) }, 10*time.Second)
	for i, id := range ids {
		if !bytes.Equal(got[i], data) {
			t.Errorf("stream %d: the server read %d bytes, want the %d written", id, len(got[i]), len(data))
		}
	}
	for _, c := range []*Conn{p.client, p.server} {
		if len(given[c]) != len(ids) {
			t.Errorf("client %v: memory given for %d streams, want %d", c.IsClient(), len(given[c]), len(ids))
		}
		for _, id := range ids {
			m := given[c][id]
			if m == nil {
				t.Errorf("client %v: no memory given for stream %d", c.IsClient(), id)
				continue
			}
			if s := c.streams.m[id]; s != nil && s != &m.m.s {
				t.Errorf("client %v: stream %d is not in the memory given for it", c.IsClient(), id)
			}
		}
	}
}
