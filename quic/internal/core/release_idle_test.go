package core

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// TestReleaseIdleChangesNothing runs the same transfer twice, with key
// updates and losses, the second time with both ends calling ReleaseIdle
// before every step: the same datagrams go out at the same times and the
// data arrives whole.
func TestReleaseIdleChangesNothing(t *testing.T) {
	type outcome struct {
		sizes   [2][]int
		end     time.Duration
		updates uint64
	}
	run := func(release bool) outcome {
		ccfg, scfg := testConfigs(t, 72)
		ccfg.KeyUpdateInterval = 200
		p := newPair(t, ccfg, scfg, 5*time.Millisecond)
		p.drop = func(toServer bool, n int, _ []byte) bool { return n > 20 && n%37 == 0 }
		p.mustRun(p.confirmed, time.Second)
		id, err := p.client.OpenStream(p.now, true)
		if err != nil {
			t.Fatal(err)
		}
		data := payload(1<<20, 4)
		w := &writer{id: id, data: data}
		var got []byte
		done := false
		p.clientApp = func(now time.Duration, c *Conn) {
			if release {
				c.ReleaseIdle()
			}
			w.pump(t, c)
		}
		p.serverApp = func(now time.Duration, c *Conn) {
			if release {
				c.ReleaseIdle()
			}
			if hasEvent(p.serverEvents, EventStreamOpened) && !done {
				done = readAll(t, now, c, id, &got)
			}
		}
		p.mustRun(func() bool { return done }, 30*time.Second)
		if !bytes.Equal(got, data) {
			t.Fatalf("release %v: the data differs", release)
		}
		if release {
			c := p.server
			c.ReleaseIdle()
			if c.build != nil || c.parser != nil || len(c.events.q) != 0 {
				t.Fatal("ReleaseIdle kept the builder, the parser or the event queue")
			}
		}
		return outcome{sizes: p.sizes, end: p.now, updates: p.client.KeyUpdates()}
	}
	plain, released := run(false), run(true)
	if plain.updates < 3 {
		t.Fatalf("%d key updates: the test means to cover them", plain.updates)
	}
	if plain.end != released.end || plain.updates != released.updates ||
		!slices.Equal(plain.sizes[0], released.sizes[0]) || !slices.Equal(plain.sizes[1], released.sizes[1]) {
		t.Fatalf("ReleaseIdle changed the transfer: ended at %v with %d updates and %d+%d datagrams, not %v, %d and %d+%d",
			released.end, released.updates, len(released.sizes[0]), len(released.sizes[1]),
			plain.end, plain.updates, len(plain.sizes[0]), len(plain.sizes[1]))
	}
	t.Logf("%d+%d datagrams, %d key updates, done at %v", len(plain.sizes[0]), len(plain.sizes[1]), plain.updates, plain.end)
}
