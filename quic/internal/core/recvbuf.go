package core

// recvBuffer reassembles one incoming byte stream (a STREAM or the CRYPTO
// data of one level) from frames that may arrive out of order, overlap or
// repeat (RFC 9000 section 2.2).
//
// Bytes are stored at their stream offset in pooled blocks of
// recvBlockSize: the block at index k of blocks holds the offsets
// [base + k*recvBlockSize, base + (k+1)*recvBlockSize), and base is the
// read offset rounded down to a block, so a frame is copied straight to its
// place whatever order it arrives in, and a read copies long in-order runs
// out. A block is taken from the pool when the first byte for it arrives
// and goes back when the reader has passed it; blocks no byte reached yet
// are nil. have says which bytes at or above the read offset arrived.
//
// Memory stays within what flow control allows: a stream's receive window
// bounds its highest offset (and so its blocks), and the CRYPTO data is
// bounded by MaxCryptoBuffer.
type recvBuffer struct {
	blocks ring[*recvBlock]
	base   uint64 // offset of the first byte of blocks.at(0), when blocks is not empty
	have   rangeSet

	readOff uint64 // next byte to hand to the reader
	highest uint64 // end of the highest byte received
	held    uint64 // bytes received and not read

	// dropping: the reader gave up (discard); bytes below dropTo count as
	// consumed. The buffer stores nothing more but still tracks which
	// bytes arrived, with readOff at the end of those received in order,
	// so that the stream knows when all its data arrived (RFC 9000
	// section 3.2, Data Recvd).
	dropping bool
	dropTo   uint64
}

// push stores the bytes of data at off, ignoring those already held or
// already read. It copies what it keeps: data may be reused by the caller.
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
	if b.dropping {
		b.have.add(off, end)
		b.skipReceived()
		return
	}
	b.ensureBlocks(end)
	if n := b.have.count(); n == 0 || off >= b.have.s[n-1].hi {
		// Beyond everything held: the common, in-order case.
		b.store(off, data)
		b.held += uint64(len(data))
		b.have.add(off, end)
		return
	}
	// Store only the gaps, so that bytes already held never change (RFC
	// 9000 section 2.2: the data at an offset must not change).
	cur, i := off, b.have.search(off)
	for cur < end {
		if i < b.have.count() && b.have.s[i].lo <= cur {
			cur = max(cur, b.have.s[i].hi)
			i++
			continue
		}
		gapEnd := end
		if i < b.have.count() {
			gapEnd = min(end, b.have.s[i].lo)
		}
		b.store(cur, data[cur-off:gapEnd-off])
		b.held += gapEnd - cur
		cur = gapEnd
	}
	b.have.add(off, end)
}

// ensureBlocks extends the block index up to offset end (exclusive).
func (b *recvBuffer) ensureBlocks(end uint64) {
	if b.blocks.len() == 0 {
		b.base = b.readOff - b.readOff%recvBlockSize
	}
	need := int((end - b.base + recvBlockSize - 1) / recvBlockSize)
	for b.blocks.len() < need {
		b.blocks.pushBack(nil)
	}
}

// store copies data to its offset; the blocks must be indexed.
func (b *recvBuffer) store(off uint64, data []byte) {
	for len(data) > 0 {
		rel := off - b.base
		slot := b.blocks.at(int(rel / recvBlockSize))
		if *slot == nil {
			*slot = getRecvBlock()
		}
		n := copy((*slot)[rel%recvBlockSize:], data)
		data = data[n:]
		off += uint64(n)
	}
}

// received is how many bytes of the stream arrived, read or held: it
// grows with every push that brings a byte not seen before.
func (b *recvBuffer) received() uint64 { return b.readOff + b.held }

// readable is the number of bytes that can be read in order now.
func (b *recvBuffer) readable() uint64 {
	if !b.hasReadable() {
		return 0
	}
	return b.have.s[0].hi - b.readOff
}

// hasReadable reports whether the next byte to read is held.
func (b *recvBuffer) hasReadable() bool {
	return b.have.count() > 0 && b.have.s[0].lo == b.readOff
}

// read copies in-order bytes into p and consumes them.
func (b *recvBuffer) read(p []byte) int {
	n := 0
	for n < len(p) {
		run := b.next()
		if len(run) == 0 {
			break
		}
		c := copy(p[n:], run)
		n += c
		b.consume(c)
	}
	return n
}

// next returns the next in-order run of bytes without copying, at most to
// the end of its block; the caller consumes what it used with consume
// before the next push.
func (b *recvBuffer) next() []byte {
	if !b.hasReadable() {
		return nil
	}
	rel := b.readOff - b.base
	blk := *b.blocks.at(0)
	end := min(recvBlockSize, b.have.s[0].hi-b.base)
	return blk[rel:end]
}

// consume drops n readable bytes and gives back the blocks the reader
// has passed.
func (b *recvBuffer) consume(n int) {
	b.readOff += uint64(n)
	b.held -= uint64(n)
	if b.have.s[0].hi == b.readOff {
		b.have.dropLowest()
	} else {
		b.have.s[0].lo = b.readOff
	}
	for b.blocks.len() > 0 && b.base+recvBlockSize <= b.readOff {
		if blk := b.blocks.popFront(); blk != nil {
			putRecvBlock(blk)
		}
		b.base += recvBlockSize
	}
	if b.held == 0 {
		// Everything received was read: the last block, partly read,
		// goes back too, so that a short stream or CRYPTO flight does
		// not keep it until the stream is forgotten. ensureBlocks
		// indexes fresh ones from the read offset.
		b.releaseBlocks()
	}
}

// releaseBlocks gives every block back to the pool.
func (b *recvBuffer) releaseBlocks() {
	for b.blocks.len() > 0 {
		if blk := b.blocks.popFront(); blk != nil {
			putRecvBlock(blk)
		}
	}
}

// discard drops everything held and whatever arrives from now on: the
// stream was reset, or the reader gave up on it. The bytes below off count
// as consumed (consumedTo).
func (b *recvBuffer) discard(off uint64) {
	b.releaseBlocks()
	b.held = 0
	b.dropping = true
	b.dropTo = max(b.dropTo, off)
	b.skipReceived()
}

// skipReceived moves the read offset of a discarding buffer past the bytes
// received in order.
func (b *recvBuffer) skipReceived() {
	if b.hasReadable() {
		b.readOff = b.have.s[0].hi
		b.have.dropLowest()
	}
}

// consumedTo is the offset below which every byte was read or discarded:
// what flow control counts as consumed.
func (b *recvBuffer) consumedTo() uint64 {
	if b.dropping {
		return max(b.readOff, b.dropTo)
	}
	return b.readOff
}
