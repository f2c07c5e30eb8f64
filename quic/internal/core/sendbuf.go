package core

// sendBuffer holds the bytes of one outgoing byte stream (a STREAM or the
// CRYPTO data of one encryption level) from the first byte the peer has not
// acknowledged to the last byte written. It knows which bytes were never
// sent, which were declared lost and must be sent again (RFC 9000 section
// 13.3: data is retransmitted in new frames, not packets), and which the
// peer acknowledged out of order.
//
// The bytes live in pooled blocks of sendBlockSize (pool.go): the block at
// index k of blocks holds the offsets [start + k*sendBlockSize, start +
// (k+1)*sendBlockSize), filled up to written, and goes back to the pool as
// soon as the peer acknowledged all of it.
type sendBuffer struct {
	blocks ring[*sendBlock]
	start  uint64 // offset of blocks.at(0)[0], a multiple of sendBlockSize

	ackedTo uint64   // every byte below is acknowledged
	acked   rangeSet // acknowledged bytes above ackedTo
	lost    rangeSet // bytes below next to send again
	next    uint64   // first byte never sent
	written uint64   // end of the data written
}

// write appends p to the stream.
func (b *sendBuffer) write(p []byte) {
	for len(p) > 0 {
		rel := b.written - b.start
		idx := int(rel / sendBlockSize)
		if idx == b.blocks.len() {
			b.blocks.pushBack(getSendBlock())
		}
		n := copy((*b.blocks.at(idx))[rel%sendBlockSize:], p)
		b.written += uint64(n)
		p = p[n:]
	}
}

// buffered is the number of bytes held: written and not yet acknowledged
// in order.
func (b *sendBuffer) buffered() uint64 { return b.written - b.ackedTo }

// unacked is the number of bytes held that the peer has not acknowledged:
// those buffered less the ones acknowledged above a gap, which wait for
// the gap's retransmission.
func (b *sendBuffer) unacked() uint64 { return b.buffered() - b.acked.total() }

// readAt copies the stream bytes from off into dst, which must lie within
// [ackedTo, written).
func (b *sendBuffer) readAt(dst []byte, off uint64) {
	for len(dst) > 0 {
		rel := off - b.start
		n := copy(dst, (*b.blocks.at(int(rel / sendBlockSize)))[rel%sendBlockSize:])
		dst = dst[n:]
		off += uint64(n)
	}
}

// view returns the n stream bytes at off without copying when they lie in
// one block, which must then not be changed and is valid until the next
// acknowledgement; ok is false when they straddle two blocks (use readAt).
// The range must lie within [ackedTo, written).
func (b *sendBuffer) view(off, n uint64) ([]byte, bool) {
	if n == 0 {
		return nil, true
	}
	rel := off - b.start
	pos := rel % sendBlockSize
	if pos+n > sendBlockSize {
		return nil, false
	}
	return (*b.blocks.at(int(rel / sendBlockSize)))[pos : pos+n], true
}

// hasPending reports whether bytes wait to be sent: lost ones, or new
// ones below limit (the flow control limit on the stream's offsets).
func (b *sendBuffer) hasPending(limit uint64) bool {
	return !b.lost.empty() || b.next < min(b.written, limit)
}

// hasLost reports whether lost bytes wait to be sent again.
func (b *sendBuffer) hasLost() bool { return !b.lost.empty() }

// nextRange picks the next bytes to send, at most n of them: lost bytes
// first, then new bytes below limit. It reports whether the range is new
// data (which counts against flow control).
func (b *sendBuffer) nextRange(n, limit uint64) (sp span, isNew bool) {
	if !b.lost.empty() {
		return b.lost.takeFirst(n), false
	}
	end := min(b.written, limit, b.next+n)
	sp = span{b.next, max(end, b.next)}
	b.next = sp.hi
	return sp, true
}

// onAck records the acknowledgement of [off, off+n) and frees the blocks
// the peer no longer needs.
func (b *sendBuffer) onAck(off, n uint64) {
	end := off + n
	if end <= b.ackedTo {
		return
	}
	off = max(off, b.ackedTo)
	b.lost.remove(off, end)
	if off > b.ackedTo {
		b.acked.add(off, end)
		return
	}
	b.ackedTo = end
	b.acked.removeBelow(b.ackedTo)
	if !b.acked.empty() && b.acked.min() == b.ackedTo {
		b.ackedTo = b.acked.first().hi
		b.acked.dropLowest()
	}
	b.freeAcked()
}

func (b *sendBuffer) freeAcked() {
	for b.blocks.len() > 0 && b.start+sendBlockSize <= b.ackedTo {
		putSendBlock(b.blocks.popFront())
		b.start += sendBlockSize
	}
	if b.blocks.len() > 0 && b.ackedTo == b.written {
		// Everything written was acknowledged: the last block, partly
		// filled, goes back too, so that a short stream or CRYPTO
		// flight does not keep its block until the connection ends
		// (and then leave it to the garbage collector). A later write
		// takes a fresh one.
		putSendBlock(b.blocks.popFront())
	}
	if b.blocks.len() == 0 {
		// Keep start aligned to the next byte to write.
		b.start = b.written - b.written%sendBlockSize
	}
}

// onLost queues [off, off+n) to be sent again, except for the bytes the
// peer acknowledged meanwhile.
func (b *sendBuffer) onLost(off, n uint64) {
	end := off + n
	off = max(off, b.ackedTo)
	if off >= end {
		return
	}
	if b.acked.empty() || b.acked.max() < off || b.acked.min() >= end {
		b.lost.add(off, end)
		return
	}
	// Add the parts between acknowledged spans.
	cur := off
	for _, a := range b.acked.s {
		if a.hi <= cur {
			continue
		}
		if a.lo >= end {
			break
		}
		if a.lo > cur {
			b.lost.add(cur, a.lo)
		}
		cur = a.hi
	}
	if cur < end {
		b.lost.add(cur, end)
	}
}

// requeueUnacked queues every byte sent and not acknowledged to be sent
// again: the content of a probe in a handshake space (RFC 9002 section
// 6.2.4) or a retransmission after a PTO.
func (b *sendBuffer) requeueUnacked() {
	if b.next > b.ackedTo {
		b.onLost(b.ackedTo, b.next-b.ackedTo)
	}
}

// allAcked reports whether every written byte was acknowledged.
func (b *sendBuffer) allAcked() bool { return b.ackedTo == b.written }

// release drops the data: the stream was reset and nothing of it will be
// sent again.
func (b *sendBuffer) release() {
	for b.blocks.len() > 0 {
		putSendBlock(b.blocks.popFront())
	}
	b.lost.clear()
	b.acked.clear()
	b.ackedTo = b.written
	b.next = b.written
	b.start = b.written - b.written%sendBlockSize
}
