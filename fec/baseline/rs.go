package baseline

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/reedsolomon"
	"github.com/satquic/satquic/fec"
)

// Block Reed-Solomon, the baseline of kcptun and UDPspeeder: after every
// `data` sources the encoder sends `parity` repair shards computed with
// klauspost/reedsolomon (systematic Vandermonde code over GF(2^8)), and
// the decoder rebuilds the lost sources of a block from any `data` of its
// data+parity shards. Shards are the coded symbols of symbol.go,
// padded to the block's largest. Incomplete blocks are never flushed: the
// baseline measures steady state, and the last data-1 or fewer sources of
// a finite stream stay unprotected. Overhead is exactly parity/data.
//
// Repair packet (big-endian fields):
//
//	offset  size      field
//	0       1         Tag, 0x52 ('R')
//	1       4         First ESI of the block
//	5       1         Data: sources per block
//	6       1         Parity: repairs per block
//	7       1         Index of this repair, 0..Parity-1
//	8       2         MaxLen: longest payload of the block
//	10      2+MaxLen  parity shard
//
// The packet's length must be exactly 10+2+MaxLen, so a truncated repair
// is always detected. Data and Parity let the decoder check that it uses
// the same code.

const (
	rsRepairTag       = 0x52 // 'R'
	rsRepairHeaderLen = 10
	// maxRSShards is the limit of klauspost's GF(2^8) codes; beyond it
	// the library switches to a GF(2^16) code with other shard rules.
	maxRSShards = 256
)

// rsRepairHeader identifies one parity shard of a block.
type rsRepairHeader struct {
	First  uint32
	Data   uint8
	Parity uint8
	Index  uint8
	MaxLen uint16
}

// shardSize is the size of every shard of the block.
func (h rsRepairHeader) shardSize() int { return codedLengthSize + int(h.MaxLen) }

// put writes the header into b, which must hold rsRepairHeaderLen bytes.
func (h rsRepairHeader) put(b []byte) {
	b[0] = rsRepairTag
	binary.BigEndian.PutUint32(b[1:], h.First)
	b[5], b[6], b[7] = h.Data, h.Parity, h.Index
	binary.BigEndian.PutUint16(b[8:], h.MaxLen)
}

// parseRSRepair splits a Reed-Solomon repair packet into its header and
// parity shard (a sub-slice of packet), checking every field.
func parseRSRepair(packet []byte) (rsRepairHeader, []byte, error) {
	if len(packet) < rsRepairHeaderLen {
		return rsRepairHeader{}, nil, fmt.Errorf("%w: rs repair of %d bytes is shorter than its %d-byte header", ErrMalformedRepair, len(packet), rsRepairHeaderLen)
	}
	if packet[0] != rsRepairTag {
		return rsRepairHeader{}, nil, fmt.Errorf("%w: tag %#02x is not an rs repair", ErrMalformedRepair, packet[0])
	}
	h := rsRepairHeader{
		First:  binary.BigEndian.Uint32(packet[1:]),
		Data:   packet[5],
		Parity: packet[6],
		Index:  packet[7],
		MaxLen: binary.BigEndian.Uint16(packet[8:]),
	}
	if err := checkRSShape(int(h.Data), int(h.Parity)); err != nil {
		return rsRepairHeader{}, nil, fmt.Errorf("%w: %w", ErrMalformedRepair, err)
	}
	switch {
	case h.Index >= h.Parity:
		return rsRepairHeader{}, nil, fmt.Errorf("%w: rs repair index %d of %d", ErrMalformedRepair, h.Index, h.Parity)
	case h.MaxLen > maxProtectedPayload:
		return rsRepairHeader{}, nil, fmt.Errorf("%w: rs repair max length %d above %d", ErrMalformedRepair, h.MaxLen, maxProtectedPayload)
	}
	shard := packet[rsRepairHeaderLen:]
	if len(shard) != h.shardSize() {
		return rsRepairHeader{}, nil, fmt.Errorf("%w: rs repair shard of %d bytes, header says %d", ErrMalformedRepair, len(shard), h.shardSize())
	}
	return h, shard, nil
}

// checkRSShape checks the block shape of a Reed-Solomon code.
func checkRSShape(data, parity int) error {
	if data < 1 || parity < 1 || data+parity > maxRSShards {
		return fmt.Errorf("rs %d+%d: want data >= 1, parity >= 1, data+parity <= %d", data, parity, maxRSShards)
	}
	return nil
}

// newRSCode builds the klauspost code. One goroutine: the package never
// starts goroutines, and packet-sized shards gain nothing from splitting.
func newRSCode(data, parity int) (reedsolomon.Encoder, error) {
	if err := checkRSShape(data, parity); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	code, err := reedsolomon.New(data, parity, reedsolomon.WithMaxGoroutines(1))
	if err != nil {
		return nil, fmt.Errorf("baseline: rs %d+%d: %w", data, parity, err)
	}
	return code, nil
}

// NewRSEncoder returns an encoder that sends `parity` Reed-Solomon repairs
// after every `data` sources.
func NewRSEncoder(data, parity int) (fec.SchemeEncoder, error) {
	code, err := newRSCode(data, parity)
	if err != nil {
		return nil, err
	}
	return &rsEncoder{
		code:    code,
		data:    data,
		parity:  parity,
		sources: make([][]byte, data),
		packets: make([][]byte, parity),
		shards:  make([][]byte, data+parity),
		out:     make([][]byte, parity),
	}, nil
}

// rsEncoder collects a block's coded sources and encodes the block when it
// is full. Its buffers are reused from block to block.
type rsEncoder struct {
	code         reedsolomon.Encoder
	data, parity int
	next         uint64   // sources so far; the next ESI is its low 32 bits
	first        uint32   // ESI of the current block's first source
	filled       int      // sources in the current block
	maxSize      int      // largest coded symbol of the current block
	sources      [][]byte // coded sources of the current block
	packets      [][]byte // repair packets; parity shards are views into them
	shards       [][]byte
	out          [][]byte
}

// AddSource adds the source to the current block and, when the block is
// full, returns its parity repairs.
func (e *rsEncoder) AddSource(payload []byte) [][]byte {
	if e.filled == 0 {
		e.first, e.maxSize = uint32(e.next), 0
	}
	e.next++
	e.sources[e.filled] = appendCoded(e.sources[e.filled][:0], payload)
	e.maxSize = max(e.maxSize, len(e.sources[e.filled]))
	e.filled++
	if e.filled < e.data {
		return nil
	}
	e.filled = 0
	return e.encodeBlock()
}

// encodeBlock pads the block's sources to one shard size and computes the
// parity shards straight into the repair packets.
func (e *rsEncoder) encodeBlock() [][]byte {
	size := e.maxSize
	for i := range e.data {
		e.sources[i] = padTo(e.sources[i], size)
		e.shards[i] = e.sources[i][:size]
	}
	for j := range e.parity {
		h := rsRepairHeader{
			First:  e.first,
			Data:   uint8(e.data),
			Parity: uint8(e.parity),
			Index:  uint8(j),
			MaxLen: uint16(size - codedLengthSize),
		}
		e.packets[j] = padTo(e.packets[j][:0], rsRepairHeaderLen+size)
		h.put(e.packets[j])
		e.shards[e.data+j] = e.packets[j][rsRepairHeaderLen:]
		e.out[j] = e.packets[j]
	}
	// Encode fails only on shards of unequal size or count, which the
	// code above rules out; a block it refused would go unprotected
	// rather than carry wrong parity.
	if err := e.code.Encode(e.shards); err != nil {
		return nil
	}
	return e.out
}

// OnFeedback ignores loss reports: the code rate is fixed.
func (e *rsEncoder) OnFeedback(fec.Feedback) [][]byte { return nil }
