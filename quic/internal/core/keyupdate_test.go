package core

import (
	"bytes"
	"testing"
	"time"
)

// TestKeyUpdate transfers data while the client updates its keys every
// 100 packets; the server follows each update (RFC 9001 section 6.2).
func TestKeyUpdate(t *testing.T) {
	ccfg, scfg := testConfigs(t, 70)
	ccfg.KeyUpdateInterval = 100
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	id, err := p.client.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	data := payload(2<<20, 3)
	w := &writer{id: id, data: data}
	var got []byte
	done := false
	p.clientApp = func(now time.Duration, c *Conn) { w.pump(t, c) }
	p.serverApp = func(now time.Duration, c *Conn) {
		if hasEvent(p.serverEvents, EventStreamOpened) && !done {
			done = readAll(t, now, c, id, &got)
		}
	}
	p.mustRun(func() bool { return done }, 30*time.Second)
	if !bytes.Equal(got, data) {
		t.Fatal("data differs")
	}
	cu, su := p.client.KeyUpdates(), p.server.KeyUpdates()
	if cu < 5 || cu != su {
		t.Fatalf("client updated %d times, server %d", cu, su)
	}
	// Old read keys are dropped three PTOs after an update.
	p.mustRun(func() bool { return p.server.appRead.Previous() == nil }, p.now+5*time.Second)
	t.Logf("%d key updates for %d packets", cu, p.client.Stats().PacketsSent)
}

// TestKeyUpdateWaitsForAck: no new update before a packet of the current
// phase was acknowledged (RFC 9001 section 6.1).
func TestKeyUpdateWaitsForAck(t *testing.T) {
	ccfg, scfg := testConfigs(t, 71)
	ccfg.KeyUpdateInterval = 1
	p := newPair(t, ccfg, scfg, 50*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	before := p.client.KeyUpdates()
	id, _ := p.client.OpenStream(p.now, false)
	// Many packets within one round trip: one update at most.
	for i := range 10 {
		if _, err := p.client.StreamWrite(id, payload(1000, uint64(i))); err != nil {
			t.Fatal(err)
		}
		p.flush(p.client, true)
	}
	if n := p.client.KeyUpdates() - before; n > 1 {
		t.Fatalf("%d key updates within a round trip", n)
	}
}
