package core

// ring is a FIFO with indexed access over a circular slice whose length is
// zero or a power of two. It doubles when full and never shrinks, so a
// queue that slides forward for the life of a connection (the blocks of a
// stream buffer, the streams taking turns to send) reuses its memory; a
// re-sliced Go slice would reallocate every time its shrinking capacity
// ran out.
type ring[T any] struct {
	buf  []T
	head int
	n    int
}

func (r *ring[T]) len() int { return r.n }

// at returns the i-th element from the front; i must be below len.
func (r *ring[T]) at(i int) *T { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

func (r *ring[T]) pushBack(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	*r.at(r.n) = v
	r.n++
}

// popFront removes and returns the first element; the ring must not be
// empty. The slot is zeroed so that it keeps nothing alive.
func (r *ring[T]) popFront() T {
	p := &r.buf[r.head]
	v := *p
	var zero T
	*p = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

func (r *ring[T]) grow() {
	buf := make([]T, max(2*len(r.buf), 4))
	for i := range r.n {
		buf[i] = *r.at(i)
	}
	r.buf, r.head = buf, 0
}
