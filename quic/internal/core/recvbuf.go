package core

// segment is a run of received bytes at an offset.
type segment struct {
	off  uint64
	data []byte
}

func (s *segment) end() uint64 { return s.off + uint64(len(s.data)) }

// recvBuffer reassembles one incoming byte stream (a STREAM or the CRYPTO
// data of one level) from frames that may arrive out of order, overlap or
// repeat (RFC 9000 section 2.2). It keeps copies of the bytes at or above
// the read offset, in ascending, non-overlapping segments.
type recvBuffer struct {
	segs    []segment
	readOff uint64 // next byte to hand to the reader
	highest uint64 // end of the highest byte received
	held    uint64 // bytes held in segs
}

// push stores the bytes of data at off, ignoring those already held or
// already read. It copies what it keeps.
func (b *recvBuffer) push(off uint64, data []byte) {
	end := off + uint64(len(data))
	b.highest = max(b.highest, end)
	if end <= b.readOff || len(data) == 0 {
		return
	}
	if off < b.readOff {
		data = data[b.readOff-off:]
		off = b.readOff
	}
	n := len(b.segs)
	if n == 0 || off >= b.segs[n-1].end() {
		b.segs = append(b.segs, segment{off, clone(data)})
		b.held += uint64(len(data))
		return
	}
	b.insert(off, data)
}

// insert stores the parts of [off, off+len(data)) no segment covers.
func (b *recvBuffer) insert(off uint64, data []byte) {
	end := off + uint64(len(data))
	// First segment that ends after off.
	i, j := 0, len(b.segs)
	for i < j {
		m := int(uint(i+j) >> 1)
		if b.segs[m].end() <= off {
			i = m + 1
		} else {
			j = m
		}
	}
	var add []segment
	cur := off
	for k := i; k < len(b.segs) && cur < end; k++ {
		s := &b.segs[k]
		if s.off > cur {
			gapEnd := min(s.off, end)
			add = append(add, segment{cur, clone(data[cur-off : gapEnd-off])})
		}
		cur = max(cur, s.end())
	}
	if cur < end {
		add = append(add, segment{cur, clone(data[cur-off:])})
	}
	if len(add) == 0 {
		return
	}
	for _, a := range add {
		b.held += uint64(len(a.data))
	}
	// Merge the new segments into place: both lists are sorted.
	merged := make([]segment, 0, len(b.segs)+len(add))
	merged = append(merged, b.segs[:i]...)
	x, y := i, 0
	for x < len(b.segs) || y < len(add) {
		if y == len(add) || (x < len(b.segs) && b.segs[x].off < add[y].off) {
			merged = append(merged, b.segs[x])
			x++
		} else {
			merged = append(merged, add[y])
			y++
		}
	}
	b.segs = merged
}

// readable is the number of bytes that can be read in order now.
func (b *recvBuffer) readable() uint64 {
	var n uint64
	off := b.readOff
	for i := range b.segs {
		if b.segs[i].off != off {
			break
		}
		n += uint64(len(b.segs[i].data))
		off = b.segs[i].end()
	}
	return n
}

// hasReadable reports whether the next byte to read is held.
func (b *recvBuffer) hasReadable() bool {
	return len(b.segs) > 0 && b.segs[0].off == b.readOff
}

// read copies in-order bytes into p and consumes them.
func (b *recvBuffer) read(p []byte) int {
	n := 0
	for n < len(p) && len(b.segs) > 0 && b.segs[0].off == b.readOff {
		s := &b.segs[0]
		c := copy(p[n:], s.data)
		n += c
		b.consume(c)
	}
	return n
}

// next returns the next in-order run of bytes without copying; the caller
// consumes what it used with consume.
func (b *recvBuffer) next() []byte {
	if !b.hasReadable() {
		return nil
	}
	return b.segs[0].data
}

// consume drops n bytes from the head segment.
func (b *recvBuffer) consume(n int) {
	s := &b.segs[0]
	s.data = s.data[n:]
	s.off += uint64(n)
	b.readOff += uint64(n)
	b.held -= uint64(n)
	if len(s.data) == 0 {
		b.segs[0] = segment{}
		b.segs = b.segs[1:]
		if len(b.segs) == 0 {
			b.segs = nil
		}
	}
}

// discard drops everything held and moves the read offset to off: the
// stream was reset, or the reader gave up on it.
func (b *recvBuffer) discard(off uint64) {
	b.segs = nil
	b.held = 0
	b.readOff = max(b.readOff, off)
}

func clone(p []byte) []byte {
	return append(make([]byte, 0, len(p)), p...)
}
