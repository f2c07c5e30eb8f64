package recovery

// ReleaseIdle frees the storage the Sender keeps for reuse: each space's
// sent-packet ring shrinks to what it holds (an idle connection's are
// empty, or hold its last ACK-only packets, which the peer acknowledges
// only when it next sends), and the scratch of its results and events
// goes. Each grows again when next used, so that a connection that goes
// idle holds only its state.
func (s *Sender) ReleaseIdle() {
	for i := range s.spaces {
		sp := &s.spaces[i]
		sp.ring.shrink()
		sp.holes = releaseIfEmpty(sp.holes)
		sp.skipped = releaseIfEmpty(sp.skipped)
	}
	s.delivered = releaseIfEmpty(s.delivered)
	s.deferred = releaseIfEmpty(s.deferred)
	// Every call that fills res resets it first, and nothing reads it
	// between calls.
	s.res = Result{}
	s.ev.Acked = nil
}

// releaseIfEmpty drops the array of an empty slice.
func releaseIfEmpty[T any](v []T) []T {
	if len(v) == 0 {
		return nil
	}
	return v
}

// shrink moves the ring's records into the smallest array that holds
// them, a power of two, or drops the array when it holds none.
func (r *sentRing) shrink() {
	if r.n == 0 {
		r.buf, r.head = nil, 0
		return
	}
	size := 1
	for size < r.n {
		size *= 2
	}
	if size == len(r.buf) {
		return
	}
	buf := make([]sentPacket, size)
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
