package http3

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestWatchList: each item fires one period after it joined, in the
// order they joined, from one timer; an item that left does not fire;
// one that left for good cannot join again; a stopped list fires no
// more.
func TestWatchList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const period = 10 * time.Second
		start := time.Now()
		var mu sync.Mutex
		var fired []string
		names := map[*watchItem]string{}
		l := newWatchList(period, func(it *watchItem) {
			mu.Lock()
			fired = append(fired, names[it]+"@"+time.Since(start).String())
			mu.Unlock()
		})
		a, b, c, d := new(watchItem), new(watchItem), new(watchItem), new(watchItem)
		names[a], names[b], names[c], names[d] = "a", "b", "c", "d"
		l.join(a)
		time.Sleep(time.Second)
		l.join(b)
		l.join(b) // already in: no change
		l.join(c)
		time.Sleep(time.Second)
		l.leave(c, false) // c left before its time: it does not fire
		l.join(d)
		l.leave(d, true)
		l.join(d) // d left for good
		time.Sleep(period)
		synctest.Wait()
		mu.Lock()
		got := append([]string(nil), fired...)
		mu.Unlock()
		want := []string{"a@10s", "b@11s"}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("fired %v, want %v", got, want)
		}
		// Joining again after firing: due a period later.
		l.join(a)
		time.Sleep(period + time.Second)
		synctest.Wait()
		mu.Lock()
		got = append([]string(nil), fired...)
		mu.Unlock()
		if len(got) != 3 || got[2] != "a@22s" {
			t.Fatalf("fired %v, want a third a@22s", got)
		}
		l.join(b)
		l.stop()
		l.join(c)
		time.Sleep(2 * period)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(fired) != 3 {
			t.Fatalf("a stopped list fired %v", fired[3:])
		}
	})
}
