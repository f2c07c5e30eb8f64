package tunnel

import "sync"

// bufferStack holds the buffers device reads go into, the one given back
// last on top: it is the next one filled, while the processor's cache
// still holds it (the sender that gave it back, or the QUIC connection
// that handed it over in exchange for a packet, touched it last). A queue
// handed them out oldest first, after a cycle through all of them, a
// thousand-odd packets and more than a megabyte: each device read then
// wrote into memory no cache held. Buffers are made when none is free,
// so the reader never waits for one, and at most limit are kept.
type bufferStack struct {
	mu    sync.Mutex
	bufs  [][]byte
	size  int // bytes in each buffer
	limit int
}

func newBufferStack(size, limit int) *bufferStack {
	return &bufferStack{bufs: make([][]byte, 0, limit), size: size, limit: limit}
}

// fill puts a free buffer in each nil entry of dst.
func (s *bufferStack) fill(dst [][]byte) {
	s.mu.Lock()
	for i := range dst {
		if dst[i] != nil {
			continue
		}
		if n := len(s.bufs); n > 0 {
			dst[i] = s.bufs[n-1]
			s.bufs[n-1] = nil
			s.bufs = s.bufs[:n-1]
		} else {
			dst[i] = make([]byte, s.size)
		}
	}
	s.mu.Unlock()
}

// put gives back b, which its caller no longer uses: whole again if it
// is large enough, dropped if not (the session gave back a smaller one or
// none) or if the stack is full.
func (s *bufferStack) put(b []byte) {
	s.mu.Lock()
	s.push(b)
	s.mu.Unlock()
}

// putAll is put of each of bs, under one lock.
func (s *bufferStack) putAll(bs [][]byte) {
	s.mu.Lock()
	for _, b := range bs {
		s.push(b)
	}
	s.mu.Unlock()
}

func (s *bufferStack) push(b []byte) {
	if cap(b) >= s.size && len(s.bufs) < s.limit {
		s.bufs = append(s.bufs, b[:s.size])
	}
}
