package netsim

import "time"

type eventKind uint8

const (
	eventTimer   eventKind = iota // poll an endpoint
	eventLinkDue                  // deliver a link's due packets
)

// event is a scheduled action; seq orders events at the same time by when
// they were scheduled, which keeps runs deterministic.
type event struct {
	at    time.Duration
	seq   uint64
	kind  eventKind
	index int32 // endpoint or link
}

func (a *event) before(b *event) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// eventHeap is a binary min-heap of events on (at, seq).
type eventHeap struct{ items []event }

func (h *eventHeap) len() int { return len(h.items) }

func (h *eventHeap) peek() *event { return &h.items[0] }

func (h *eventHeap) push(e event) {
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h.items[i].before(&h.items[parent]) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *eventHeap) pop() event {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	i, n := 0, last
	for {
		smallest := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < n && h.items[c].before(&h.items[smallest]) {
				smallest = c
			}
		}
		if smallest == i {
			return top
		}
		h.items[i], h.items[smallest] = h.items[smallest], h.items[i]
		i = smallest
	}
}
