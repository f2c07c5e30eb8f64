package netsim

import "time"

// ring is a growable FIFO. It reuses its buffer, so a link in steady state
// does not allocate per packet.
type ring[T any] struct {
	buf  []T // length is zero or a power of two
	head int
	n    int
}

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *ring[T]) grow() {
	bigger := make([]T, max(16, 2*len(r.buf)))
	for i := range r.n {
		bigger[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = bigger, 0
}

// peek returns the oldest element; the ring must not be empty.
func (r *ring[T]) peek() *T { return &r.buf[r.head] }

// pop removes the oldest element, clearing its slot so that the ring does
// not keep packet buffers alive.
func (r *ring[T]) pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

// inFlight is a packet that has passed the queue and is due out at due.
type inFlight struct {
	data []byte
	due  time.Duration
	seq  uint64 // admission order, to break ties between equal due times
	tag  uint64
	ce   bool
}

func (a *inFlight) before(b *inFlight) bool {
	return a.due < b.due || (a.due == b.due && a.seq < b.seq)
}

// dueHeap is a binary min-heap on (due, seq), used when jitter may reorder
// packets. It is written out rather than built on container/heap, whose
// interface would box every element.
type dueHeap struct{ items []inFlight }

func (h *dueHeap) len() int { return len(h.items) }

func (h *dueHeap) push(v inFlight) {
	h.items = append(h.items, v)
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

func (h *dueHeap) peek() *inFlight { return &h.items[0] }

func (h *dueHeap) pop() inFlight {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items[last] = inFlight{}
	h.items = h.items[:last]
	h.siftDown(0)
	return top
}

func (h *dueHeap) siftDown(i int) {
	n := len(h.items)
	for {
		smallest := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < n && h.items[c].before(&h.items[smallest]) {
				smallest = c
			}
		}
		if smallest == i {
			return
		}
		h.items[i], h.items[smallest] = h.items[smallest], h.items[i]
		i = smallest
	}
}
