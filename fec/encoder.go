package fec

import (
	"errors"
	"fmt"
	"slices"
)

// The sliding-window RLC encoder of RFC 8681 for variable-length source
// symbols.
//
// Symbol format. RFC 8681 codes fixed-size symbols; satquic's packets vary
// in size, so, as RFC 8681 section 3.2 does for ADUs, each source payload
// is coded as a 2-byte big-endian length followed by the payload, padded
// with zeros to the repair's symbol size E. E is chosen per repair: the
// largest 2+len over its window, so a repair is never longer than it must
// be and is implied by the repair packet's length. Because the length is
// coded with the data, a recovered symbol gives back exactly the original
// bytes, and zero padding means a source of length L only costs L+2 bytes
// of GF(2^8) work per repair, whatever E is.
//
// A repair packet is the Repair FEC Payload ID (repairid.go) followed by
// the E-byte coded symbol sum(cc[j] * symbol[j]) over the window (RFC 8681
// section 3.7.2), cc coming from coefficients.go.

const (
	// symbolLenSize is the size of the length prefix of a coded symbol.
	symbolLenSize = 2
	// MaxSymbolSize is the largest source payload the codec supports: the
	// coded symbol (length prefix + payload) must fit the 16-bit symbol
	// size of RFC 8681's FEC OTI.
	MaxSymbolSize = 1<<16 - 1 - symbolLenSize
	// maxKeySkips bounds how many Repair_Keys AppendRepair skips when
	// they give only zero coefficients (possible with DT < 15), so that a
	// repair is never an all-zero combination unless the window is tiny
	// and very unlucky.
	maxKeySkips = 256
)

var (
	// ErrEmptyWindow reports a repair asked for while no source symbol is
	// in the encoding window.
	ErrEmptyWindow = errors.New("fec: no source symbol in the encoding window")
	// ErrSymbolTooLarge reports a source payload above the configured
	// MaxSymbolSize.
	ErrSymbolTooLarge = errors.New("fec: source symbol larger than MaxSymbolSize")
	// ErrBadConfig reports an invalid encoder or decoder configuration.
	ErrBadConfig = errors.New("fec: invalid codec configuration")
)

// EncoderConfig configures an Encoder. Beware that DT's zero value is the
// sparsest code of RFC 8681 (one coefficient in 16 non-zero); set DT to
// 15 for the usual dense code.
type EncoderConfig struct {
	// MaxWindow is the most source symbols a repair may cover, 1..4095
	// (0 means 4095). The encoder keeps that many symbols in memory.
	MaxWindow int
	// DT is the density threshold of RFC 8681 section 3.6, 0..15: each
	// coefficient is non-zero with probability (DT+1)/16, and 15 is the
	// dense code (every coefficient non-zero) that recovers best; sparser
	// codes trade recovery for less GF(2^8) work.
	DT uint8
	// MaxSymbolSize is the largest source payload accepted, 1..65533
	// (0 means 65533).
	MaxSymbolSize int
	// FirstESI is the ESI of the first source symbol; ESIs then count up
	// modulo 2^32.
	FirstESI uint32
	// FirstRepairKey is the Repair_Key of the first repair; keys then
	// count up modulo 2^16.
	FirstRepairKey uint16
}

// withDefaults validates c and fills in its zero values.
func (c EncoderConfig) withDefaults() (EncoderConfig, error) {
	var err error
	if c.MaxWindow, err = windowOrDefault(c.MaxWindow); err != nil {
		return c, err
	}
	if c.MaxSymbolSize, err = symbolSizeOrDefault(c.MaxSymbolSize); err != nil {
		return c, err
	}
	if c.DT > MaxDT {
		return c, fmt.Errorf("%w: %w: %d", ErrBadConfig, ErrBadDT, c.DT)
	}
	return c, nil
}

func windowOrDefault(w int) (int, error) {
	switch {
	case w == 0:
		return MaxNSS, nil
	case w < 0 || w > MaxNSS:
		return 0, fmt.Errorf("%w: MaxWindow %d not in 1..%d", ErrBadConfig, w, MaxNSS)
	}
	return w, nil
}

func symbolSizeOrDefault(s int) (int, error) {
	switch {
	case s == 0:
		return MaxSymbolSize, nil
	case s < 0 || s > MaxSymbolSize:
		return 0, fmt.Errorf("%w: MaxSymbolSize %d not in 1..%d", ErrBadConfig, s, MaxSymbolSize)
	}
	return s, nil
}

// Encoder builds RFC 8681 repair packets over a sliding window of the most
// recent source symbols. It is a pure state machine: not safe for
// concurrent use, no clock, no goroutines.
type Encoder struct {
	cfg    EncoderConfig
	window int // current window size limit, 1..cfg.MaxWindow
	// ring holds the coded symbols (length prefix + payload) of ESIs
	// oldest..next-1 at index esi&mask; buffers are reused.
	ring [][]byte
	// lens[i] is len(ring[i]), kept apart so that finding a window's
	// symbol size reads 2 bytes per symbol rather than a slice header.
	lens   []uint16
	mask   uint32
	oldest uint32
	next   uint32
	key    uint16
	// Scratch reused by every repair so that steady state allocates
	// nothing.
	coefs []byte
	cs    []byte
	ins   [][]byte
}

// NewEncoder returns an encoder for cfg, or an error if cfg is invalid.
func NewEncoder(cfg EncoderConfig) (*Encoder, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	size := ringSize(cfg.MaxWindow)
	return &Encoder{
		cfg:    cfg,
		window: cfg.MaxWindow,
		ring:   make([][]byte, size),
		lens:   make([]uint16, size),
		mask:   uint32(size - 1),
		oldest: cfg.FirstESI,
		next:   cfg.FirstESI,
		key:    cfg.FirstRepairKey,
		coefs:  make([]byte, cfg.MaxWindow),
	}, nil
}

// ringSize is the smallest power of two >= n. A power of two keeps
// esi&mask continuous across the 2^32 -> 0 wrap of ESIs.
func ringSize(n int) int {
	size := 1
	for size < n {
		size <<= 1
	}
	return size
}

// AddSource copies payload in as the next source symbol and returns its
// ESI. The oldest symbol leaves once MaxWindow are held.
func (e *Encoder) AddSource(payload []byte) (uint32, error) {
	if len(payload) > e.cfg.MaxSymbolSize {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrSymbolTooLarge, len(payload), e.cfg.MaxSymbolSize)
	}
	esi := e.next
	slot := &e.ring[esi&e.mask]
	*slot = putCodedSymbol(*slot, payload, e.cfg.MaxSymbolSize)
	e.lens[esi&e.mask] = uint16(len(*slot))
	e.next++
	if int(e.next-e.oldest) > e.cfg.MaxWindow {
		e.oldest++
	}
	return esi, nil
}

// appendCodedSymbol appends payload in coded form: its 16-bit big-endian
// length, then its bytes.
func appendCodedSymbol(dst, payload []byte) []byte {
	dst = append(dst, byte(len(payload)>>8), byte(len(payload)))
	return append(dst, payload...)
}

// putCodedSymbol overwrites a ring slot's buffer with payload in coded
// form, allocating at most once for an empty slot. A buffer that was used
// and proves too small is replaced by one a quarter larger than needed,
// up to the largest symbol: symbol lengths vary by a few bytes around
// allocation size classes, and growing to fit each time made a slot
// reallocate again and again over a connection. The margin, not the
// largest symbol, bounds the memory: a decoder's largest symbol is what
// its receive buffers allow (9000 bytes in the quic package), while the
// symbols a path carries are a sixth of that. A slot that never held a
// symbol gets one of its exact size, so a window of small symbols stays
// small.
func putCodedSymbol(slot, payload []byte, maxSymbol int) []byte {
	need := symbolLenSize + len(payload)
	switch c := cap(slot); {
	case c == 0:
		slot = make([]byte, 0, need)
	case c < need:
		slot = make([]byte, 0, max(need, min(need+need/4, symbolLenSize+maxSymbol)))
	}
	return appendCodedSymbol(slot[:0], payload)
}

// SetWindow limits repairs to the last n source symbols; n is clamped to
// 1..MaxWindow. Symbols outside the limit are kept, so widening it again
// brings them back.
func (e *Encoder) SetWindow(n int) { e.window = min(max(n, 1), e.cfg.MaxWindow) }

// Window returns the current window size limit.
func (e *Encoder) Window() int { return e.window }

// Forget drops the source symbols with ESI before `before` in serial
// order (RFC 1982), typically those the receiver acknowledged: repairs no
// longer cover them.
func (e *Encoder) Forget(before uint32) {
	if !esiBefore(e.oldest, before) {
		return
	}
	if esiBefore(e.next, before) {
		before = e.next
	}
	e.oldest = before
}

// Len returns how many source symbols the next repair would cover.
func (e *Encoder) Len() int { return min(int(e.next-e.oldest), e.window) }

// RepairLen returns the length of the repair packet AppendRepair would
// append now (its Repair FEC Payload ID and coded symbol), or 0 when the
// window is empty: what a repair costs, known before it is built.
func (e *Encoder) RepairLen() int {
	n := e.Len()
	if n == 0 {
		return 0
	}
	return RepairIDLen + e.symbolSize(e.next-uint32(n), n)
}

// NextESI returns the ESI the next AddSource will assign.
func (e *Encoder) NextESI() uint32 { return e.next }

// AppendRepair appends one repair packet over the current window to dst:
// the Repair FEC Payload ID followed by the coded symbol. Successive
// repairs use successive Repair_Keys (with DT < 15, a key whose
// coefficients are all zero is skipped). It fails only when the window is
// empty. With enough capacity in dst it allocates nothing.
func (e *Encoder) AppendRepair(dst []byte) ([]byte, error) {
	n := e.Len()
	if n == 0 {
		return dst, ErrEmptyWindow
	}
	first := e.next - uint32(n)
	symbolSize := e.symbolSize(first, n)
	id := RepairID{DT: e.cfg.DT, NSS: uint16(n), FirstESI: first}
	id.Key = e.drawCoefficients(n)

	start := len(dst)
	dst = slices.Grow(dst, RepairIDLen+symbolSize)
	dst = id.Append(dst)
	dst = dst[:start+RepairIDLen+symbolSize]
	out := dst[start+RepairIDLen:]
	clear(out)
	e.combine(first, n, out)
	return dst, nil
}

// symbolSize returns E for a window: the longest coded symbol in it.
func (e *Encoder) symbolSize(first uint32, n int) int {
	start := int(first & e.mask)
	head := min(n, len(e.lens)-start)
	size := longest(e.lens[start : start+head])
	if head < n {
		size = max(size, longest(e.lens[:n-head]))
	}
	return size
}

func longest(lens []uint16) int {
	m := uint16(0)
	for _, l := range lens {
		m = max(m, l)
	}
	return int(m)
}

// drawCoefficients fills e.coefs[:n] for the next usable Repair_Key and
// returns that key, advancing the key counter past it.
func (e *Encoder) drawCoefficients(n int) uint16 {
	cc := e.coefs[:n]
	for skips := 0; ; skips++ {
		key := e.key
		e.key++
		generateCoefficients(key, cc, e.cfg.DT)
		if e.cfg.DT == MaxDT || skips == maxKeySkips || !allZero(cc) {
			return key
		}
	}
}

// combine sets out ^= sum(cc[j] * symbol[first+j]) with the fused kernel.
// A dense code (DT = 15) has no zero coefficient, so the ring itself is
// the kernel's input list, in at most two segments when the window wraps
// around the ring's end; a sparse code lists its non-zero terms.
func (e *Encoder) combine(first uint32, n int, out []byte) {
	cc := e.coefs[:n]
	if e.cfg.DT == MaxDT {
		start := int(first & e.mask)
		head := min(n, len(e.ring)-start)
		MulAddSlices(cc[:head], e.ring[start:start+head], out)
		if head < n {
			MulAddSlices(cc[head:], e.ring[:n-head], out)
		}
		return
	}
	e.cs, e.ins = e.cs[:0], e.ins[:0]
	for j, c := range cc {
		if c != 0 {
			e.cs = append(e.cs, c)
			e.ins = append(e.ins, e.ring[(first+uint32(j))&e.mask])
		}
	}
	MulAddSlices(e.cs, e.ins, out)
}

// allZero reports whether every byte of b is zero.
func allZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}
