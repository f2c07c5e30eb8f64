package recovery

// sentRing holds the records of one space's packets, contiguous by packet
// number: the record of number n sits at offset n - first from the head,
// so lookup by number is O(1). Numbers the core skipped get a record in
// state stateSkipped. Records leave from the front once resolved; the ring
// grows by doubling, so steady state allocates nothing, and shrinks only
// when the connection goes idle (Sender.ReleaseIdle).
type sentRing struct {
	buf   []sentPacket // len is zero or a power of two
	head  int
	n     int
	first uint64 // number of the record at head, when n > 0
}

func (r *sentRing) len() int { return r.n }

// end is one past the last number recorded.
func (r *sentRing) end() uint64 { return r.first + uint64(r.n) }

// at returns the record of number pn, or nil if the ring does not hold it.
func (r *sentRing) at(pn uint64) *sentPacket {
	if r.n == 0 || pn < r.first || pn >= r.end() {
		return nil
	}
	return &r.buf[(r.head+int(pn-r.first))&(len(r.buf)-1)]
}

// push appends a zeroed record for number pn, which must be end() unless
// the ring is empty.
func (r *sentRing) push(pn uint64) *sentPacket {
	if r.n == len(r.buf) {
		r.grow()
	}
	if r.n == 0 {
		r.head, r.first = 0, pn
	}
	p := &r.buf[(r.head+r.n)&(len(r.buf)-1)]
	*p = sentPacket{number: pn}
	r.n++
	return p
}

func (r *sentRing) grow() {
	// A handshake space sends a few packets: its ring starts small, and
	// the application space's doubles as it needs (as the core's
	// sentLog does).
	size := max(2*len(r.buf), 4)
	buf := make([]sentPacket, size)
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}

func (r *sentRing) front() *sentPacket {
	if r.n == 0 {
		return nil
	}
	return &r.buf[r.head]
}

func (r *sentRing) popFront() {
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	r.first++
}
