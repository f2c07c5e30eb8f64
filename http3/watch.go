package http3

import (
	"sync"
	"time"
)

// A watchList runs one timer for many streams that each want attention a
// fixed period after they joined: the response writes under way, checked
// for a client that stopped reading (ResponseStallTimeout), and the
// handlers running, whose streams are polled for the client's
// STOP_SENDING. Every item is due the same period after it joined, so the
// list is in order of due time, and the timer only ever waits for its
// first item. A request then costs no timer of its own: joining and
// leaving a list is a lock and two pointers, where a timer per request
// (or per write) cost the server more than its QPACK decoding.
//
// An item leaves the list when its time is up, just before the list's
// fire function runs for it, without the list's lock held; fire may make
// it join again.
type watchList struct {
	period time.Duration
	fire   func(*watchItem)

	mu         sync.Mutex
	head, tail *watchItem
	timer      *time.Timer
	timerAt    time.Time // zero: the timer is not armed
	stopped    bool
}

// watchItem is a stream's place in a watchList.
type watchItem struct {
	g          *streamGuard
	prev, next *watchItem
	due        time.Time
	in         bool // in the list
	done       bool // left for good: fire must not make it join again
}

func newWatchList(period time.Duration, fire func(*watchItem)) *watchList {
	return &watchList{period: period, fire: fire}
}

// join puts it at the end of the list, due a period from now, unless it
// left for good. It returns the time it read, zero when it did not join.
func (l *watchList) join(it *watchItem) time.Time {
	return l.joinAt(it, time.Time{})
}

// joinAt is join with now read already, or zero to read it.
func (l *watchList) joinAt(it *watchItem, now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if it.in || it.done || l.stopped {
		return time.Time{}
	}
	if now.IsZero() {
		now = time.Now()
	}
	it.due = now.Add(l.period)
	it.in = true
	it.prev, it.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = it
	} else {
		l.head = it
	}
	l.tail = it
	if l.timerAt.IsZero() {
		l.armLocked(it.due)
	}
	return now
}

// leave takes it out of the list; with forGood, fire will not make it
// join again.
func (l *watchList) leave(it *watchItem, forGood bool) {
	l.mu.Lock()
	if forGood {
		it.done = true
	}
	if it.in {
		l.unlinkLocked(it)
	}
	l.mu.Unlock()
}

func (l *watchList) unlinkLocked(it *watchItem) {
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		l.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		l.tail = it.prev
	}
	it.prev, it.next, it.in = nil, nil, false
}

// armLocked makes the timer fire at t.
func (l *watchList) armLocked(t time.Time) {
	l.timerAt = t
	if l.timer == nil {
		l.timer = time.AfterFunc(time.Until(t), l.run)
	} else {
		l.timer.Reset(time.Until(t))
	}
}

// run takes the items whose time is up out of the list, rearms the timer
// for the next one, and fires each. An item that left meanwhile costs
// the timer one wake-up, at its due time, and nothing else.
func (l *watchList) run() {
	var due []*watchItem
	l.mu.Lock()
	now := time.Now()
	for l.head != nil && !now.Before(l.head.due) {
		it := l.head
		l.unlinkLocked(it)
		due = append(due, it)
	}
	l.timerAt = time.Time{}
	if l.head != nil && !l.stopped {
		l.armLocked(l.head.due)
	}
	l.mu.Unlock()
	for _, it := range due {
		l.fire(it)
	}
}

// stop stops the timer when the Server closes; later joins are ignored.
func (l *watchList) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
		l.timerAt = time.Time{}
	}
}
