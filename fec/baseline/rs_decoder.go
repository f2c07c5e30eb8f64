package baseline

import (
	"fmt"
	"slices"

	"github.com/klauspost/reedsolomon"
	"github.com/satquic/satquic/fec"
)

// rsDecoder is the receiver side of block Reed-Solomon. Sources are kept
// in a sourceWindow; a block is opened by its first repair and rebuilt as
// soon as it holds `data` shards (sources and repairs together). Memory is
// bounded: the window keeps twice a block plus slack, a block is dropped
// once its first source leaves the window, and at most maxBlocks blocks
// wait for shards (the oldest go first).
type rsDecoder struct {
	code         reedsolomon.Encoder
	data, parity int
	window       *sourceWindow
	maxBlocks    int
	blocks       []*rsBlock // waiting for shards, in arrival order
	free         []*rsBlock
	shards       [][]byte // scratch for ReconstructData
	scratch      [][]byte // padded data shards, reused
}

// rsBlock holds the repairs received for a block that lacks sources.
type rsBlock struct {
	first  uint32
	maxLen uint16
	repair [][]byte // parity shards by index, empty if not received
	count  int      // repairs received
}

// shardSize is the size of every shard of the block.
func (b *rsBlock) shardSize() int { return codedLengthSize + int(b.maxLen) }

// NewRSDecoder returns the decoder of NewRSEncoder(data, parity).
func NewRSDecoder(data, parity int) (fec.SchemeDecoder, error) {
	code, err := newRSCode(data, parity)
	if err != nil {
		return nil, err
	}
	d := &rsDecoder{
		code:    code,
		data:    data,
		parity:  parity,
		window:  newSourceWindow(data),
		shards:  make([][]byte, data+parity),
		scratch: make([][]byte, data),
	}
	d.maxBlocks = d.window.size()/data + 1
	return d, nil
}

// AddSource stores a received source and rebuilds the block it completes,
// if any.
func (d *rsDecoder) AddSource(esi uint32, payload []byte) []fec.Recovered {
	coded, stored := d.window.storePayload(esi, payload)
	if !stored {
		return nil
	}
	var out []fec.Recovered
	for i := 0; i < len(d.blocks); {
		var released bool
		out, released = d.onSource(i, esi, len(coded), out)
		if !released {
			i++
		}
	}
	d.expire()
	return out
}

// expire releases the blocks whose first source the window forgot: a
// rebuilt source may have moved the window on.
func (d *rsDecoder) expire() {
	d.blocks = slices.DeleteFunc(d.blocks, func(b *rsBlock) bool {
		if d.window.forgotten(b.first) {
			d.recycle(b)
			return true
		}
		return false
	})
}

// onSource updates waiting block i for a newly received source: the block
// is rebuilt if it now holds enough shards, and released once complete,
// stale or inconsistent. It reports whether block i was released.
func (d *rsDecoder) onSource(i int, esi uint32, codedLen int, out []fec.Recovered) ([]fec.Recovered, bool) {
	b := d.blocks[i]
	switch {
	case d.window.forgotten(b.first):
		d.release(i)
		return out, true
	case esi-b.first >= uint32(d.data):
		return out, false // not this block's
	case codedLen > b.shardSize():
		d.release(i) // the source contradicts the block's repairs
		return out, true
	}
	known := d.knownSources(b.first)
	if known+b.count < d.data {
		return out, false
	}
	if known < d.data {
		if rebuilt, err := d.reconstruct(b); err == nil {
			out = append(out, rebuilt...)
		}
	}
	d.release(i)
	return out, true
}

// AddRepair adds a parity shard to its block and rebuilds the block if it
// now has enough shards.
func (d *rsDecoder) AddRepair(packet []byte) ([]fec.Recovered, error) {
	h, shard, err := parseRSRepair(packet)
	if err != nil {
		return nil, err
	}
	if int(h.Data) != d.data || int(h.Parity) != d.parity {
		return nil, fmt.Errorf("%w: rs repair of a %d+%d code, decoder is %d+%d", ErrInconsistentRepair, h.Data, h.Parity, d.data, d.parity)
	}
	if d.window.forgotten(h.First) {
		return nil, nil // too old to help: its first source is forgotten
	}
	i := slices.IndexFunc(d.blocks, func(b *rsBlock) bool { return b.first == h.First })
	if i >= 0 {
		return d.addToBlock(i, h, shard)
	}
	return d.openBlock(h, shard)
}

// openBlock starts a block with its first repair: it is rebuilt at once
// if that repair is all it lacked, kept waiting otherwise.
func (d *rsDecoder) openBlock(h rsRepairHeader, shard []byte) ([]fec.Recovered, error) {
	known, err := d.scanSources(h)
	if err != nil {
		return nil, err
	}
	if known == d.data {
		return nil, nil // nothing lost in this block
	}
	b := d.newBlock(h.First, h.MaxLen)
	b.repair[h.Index] = append(b.repair[h.Index][:0], shard...)
	b.count = 1
	if known+b.count < d.data {
		d.keep(b)
		return nil, nil
	}
	out, err := d.reconstruct(b)
	d.recycle(b)
	d.expire()
	return out, err
}

// addToBlock adds a further repair to the waiting block i.
func (d *rsDecoder) addToBlock(i int, h rsRepairHeader, shard []byte) ([]fec.Recovered, error) {
	b := d.blocks[i]
	if h.MaxLen != b.maxLen {
		return nil, fmt.Errorf("%w: rs repair at %d says max length %d, an earlier one %d", ErrInconsistentRepair, h.First, h.MaxLen, b.maxLen)
	}
	if len(b.repair[h.Index]) > 0 {
		return nil, nil // duplicate
	}
	b.repair[h.Index] = append(b.repair[h.Index][:0], shard...)
	b.count++
	return d.addedRepair(i, int(h.Index))
}

// addedRepair decodes block i after repair index was added to it. If the
// rebuilt sources prove the block inconsistent, the repair is taken back
// and the error returned, leaving the decoder as it was.
func (d *rsDecoder) addedRepair(i, index int) ([]fec.Recovered, error) {
	b := d.blocks[i]
	if d.knownSources(b.first)+b.count < d.data {
		return nil, nil
	}
	out, err := d.reconstruct(b)
	if err != nil {
		b.repair[index] = b.repair[index][:0]
		b.count--
		return nil, err
	}
	d.release(i)
	d.expire()
	return out, nil
}

// scanSources counts the known sources of a new block, checking that they
// fit its shard size.
func (d *rsDecoder) scanSources(h rsRepairHeader) (int, error) {
	known := 0
	for j := range d.data {
		coded, ok := d.window.lookup(h.First + uint32(j))
		if !ok {
			continue
		}
		if len(coded) > h.shardSize() {
			return 0, fmt.Errorf("%w: source %d has a %d-byte symbol, larger than the rs shard of %d", ErrInconsistentRepair, h.First+uint32(j), len(coded), h.shardSize())
		}
		known++
	}
	return known, nil
}

// knownSources counts the sources of the block starting at first that the
// window holds.
func (d *rsDecoder) knownSources(first uint32) int {
	n := 0
	for j := range d.data {
		if _, ok := d.window.lookup(first + uint32(j)); ok {
			n++
		}
	}
	return n
}

// reconstruct rebuilds the missing sources of block b, checks every one
// of them, and only then stores and reports them: a block whose rebuilt
// symbols are inconsistent yields nothing.
func (d *rsDecoder) reconstruct(b *rsBlock) ([]fec.Recovered, error) {
	size := b.shardSize()
	for j := range d.data {
		buf := slices.Grow(d.scratch[j][:0], size)
		if coded, ok := d.window.lookup(b.first + uint32(j)); ok {
			buf = padTo(append(buf, coded...), size)
		}
		d.scratch[j] = buf
		d.shards[j] = buf
	}
	for j := range d.parity {
		d.shards[d.data+j] = b.repair[j]
	}
	if err := d.code.ReconstructData(d.shards); err != nil {
		return nil, fmt.Errorf("%w: rs block at %d: %w", ErrInconsistentRepair, b.first, err)
	}
	rebuilt := make([]rebuiltSymbol, d.data)
	for j := range d.data {
		if len(d.scratch[j]) > 0 {
			continue // was known
		}
		sym, err := checkRebuilt(d.shards[j])
		if err != nil {
			return nil, fmt.Errorf("source %d of rs block at %d: %w", b.first+uint32(j), b.first, err)
		}
		rebuilt[j] = sym
	}
	var out []fec.Recovered
	for j, sym := range rebuilt {
		esi := b.first + uint32(j)
		if sym.coded == nil || !d.window.storeCoded(esi, sym.coded) {
			continue
		}
		if sym.protected {
			out = append(out, recoveredCopy(esi, sym))
		}
	}
	return out, nil
}

// newBlock returns an empty block, recycled when possible.
func (d *rsDecoder) newBlock(first uint32, maxLen uint16) *rsBlock {
	var b *rsBlock
	if n := len(d.free); n > 0 {
		b, d.free = d.free[n-1], d.free[:n-1]
	} else {
		b = &rsBlock{repair: make([][]byte, d.parity)}
	}
	b.first, b.maxLen, b.count = first, maxLen, 0
	return b
}

// keep adds a block to the waiting list, dropping the oldest when full.
func (d *rsDecoder) keep(b *rsBlock) {
	if len(d.blocks) >= d.maxBlocks {
		d.release(0)
	}
	d.blocks = append(d.blocks, b)
}

// release removes blocks[i], keeping the arrival order, and recycles it.
func (d *rsDecoder) release(i int) {
	d.recycle(d.blocks[i])
	d.blocks = slices.Delete(d.blocks, i, i+1)
}

// recycle keeps a block that is no longer used, with its repair buffers
// emptied, for newBlock.
func (d *rsDecoder) recycle(b *rsBlock) {
	for j := range b.repair {
		b.repair[j] = b.repair[j][:0]
	}
	d.free = append(d.free, b)
}
