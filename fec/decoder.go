package fec

import (
	"errors"
	"fmt"
)

// The sliding-window RLC decoder of RFC 8681 for the variable-length
// symbols of encoder.go.
//
// Every lost source symbol of the window is an unknown; every repair is a
// linear equation over the window's symbols (RFC 8681 section 3.7.2).
// RFC 8681 section 6.2 leaves the decoding method open; this one is
// progressive Gaussian elimination: known symbols are subtracted from a
// repair as it arrives, the rest is reduced against the equations already
// held, which are kept in reduced row echelon form, and an unknown is
// returned the moment its equation has no other unknown left. A repair
// whose window lost nothing (or whose lost symbols are already rebuilt)
// costs a binary search over the window's holes (decoder_holes.go) and
// no GF(2^8) work at all.
//
// Integrity. Algebra only detects corruption when it has redundancy: a
// repair whose coefficients are implied by the held equations but whose
// data disagrees is rejected, and so is a rebuilt symbol whose length
// prefix or zero padding is impossible. A flipped data byte in the only
// repair covering a loss cannot be detected and yields wrong bytes; the
// transport must authenticate repair packets (QUIC and the tunnel do, with
// AEAD) before they reach the decoder.

var (
	// ErrSymbolSize reports a repair whose symbol size E is below 2 (it
	// cannot even hold a length prefix) or above MaxSymbolSize+2.
	ErrSymbolSize = errors.New("fec: repair symbol size out of range")
	// ErrWindowTooLarge reports a repair whose NSS exceeds the decoder's
	// MaxWindow.
	ErrWindowTooLarge = errors.New("fec: repair window larger than the decoder's MaxWindow")
	// ErrInconsistent reports a repair that contradicts what the decoder
	// knows: corrupt, forged, or from another encoder.
	ErrInconsistent = errors.New("fec: repair inconsistent with known symbols")
)

// DecoderConfig configures a Decoder. The zero value accepts what a zero
// EncoderConfig produces.
type DecoderConfig struct {
	// MaxWindow is the largest NSS accepted, 1..4095 (0 means 4095).
	// Source symbols more than MaxWindow ESIs older than the newest one
	// seen leave the decoder's memory.
	MaxWindow int
	// MaxPending is the most equations held at once, 1..MaxWindow (0 means
	// MaxWindow). Past it, the equation with the oldest pivot is dropped.
	MaxPending int
	// MaxSymbolSize is the largest source payload, as configured at the
	// encoder (0 means 65533).
	MaxSymbolSize int
}

func (c DecoderConfig) withDefaults() (DecoderConfig, error) {
	var err error
	if c.MaxWindow, err = windowOrDefault(c.MaxWindow); err != nil {
		return c, err
	}
	if c.MaxSymbolSize, err = symbolSizeOrDefault(c.MaxSymbolSize); err != nil {
		return c, err
	}
	switch {
	case c.MaxPending == 0:
		c.MaxPending = c.MaxWindow
	case c.MaxPending < 0:
		return c, fmt.Errorf("%w: MaxPending %d is negative", ErrBadConfig, c.MaxPending)
	}
	// The rank of the system cannot exceed the number of unknowns.
	c.MaxPending = min(c.MaxPending, c.MaxWindow)
	return c, nil
}

// DecoderStats counts what a Decoder has seen and done.
type DecoderStats struct {
	Sources   uint64 // AddSource calls
	Repairs   uint64 // AddRepair calls
	Recovered uint64 // source symbols rebuilt and returned
	// Rejected counts repairs refused with an error: malformed, or
	// inconsistent with the known symbols.
	Rejected uint64
	// Useless counts well-formed repairs that added no equation: nothing
	// unknown in their window, redundant with the held equations, or
	// older than the window.
	Useless uint64
	// Duplicates counts sources ignored because they were already
	// received or recovered; Late those older than the window; Oversized
	// those longer than MaxSymbolSize.
	Duplicates uint64
	Late       uint64
	Oversized  uint64
	// Dropped counts held equations abandoned because their pivot left the
	// window or MaxPending was reached; Contradicted those that a later
	// source or recovery proved corrupt.
	Dropped      uint64
	Contradicted uint64
	// Pending is the number of equations held now, and Terms the total
	// number of unknowns with a non-zero coefficient in them.
	Pending int
	Terms   int
	// Missing is the number of ESIs of the window, up to the newest seen,
	// neither received nor recovered.
	Missing int
	// MemoryBytes is the capacity of the symbol and equation buffers held.
	MemoryBytes int
}

// Decoder rebuilds lost source symbols from RFC 8681 repair packets. It is
// a pure state machine: not safe for concurrent use, no clock, no
// goroutines. Its memory is bounded by the configuration: MaxWindow source
// symbols and MaxPending equations of at most MaxSymbolSize+2 bytes each.
//
// The []Recovered returned by AddSource and AddRepair, and the Data of
// each element, belong to the decoder: they stay valid until the next call
// and must not be modified; copy what must be kept.
type Decoder struct {
	cfg DecoderConfig

	started bool
	newest  uint32
	slots   []sourceSlot
	mask    uint32
	holes   holeSet
	// floor is the first ESI the decoder saw; while floorActive, the ESIs
	// before it are in the window but unknown without being holes.
	floor       uint32
	floorActive bool

	rows   []*equation // held equations, in no particular order
	pool   equationPool
	merger rowMerger

	stats DecoderStats

	// Scratch reused across calls.
	out      []Recovered
	coefs    []byte
	cs       []byte
	ins      [][]byte
	unknowns []uint32
	reduce   []reduction
	targets  []elimTarget
	solved   []*equation
	spare    [][]byte // free data buffers for candidate solutions
}

// NewDecoder returns a decoder for cfg, or an error if cfg is invalid.
func NewDecoder(cfg DecoderConfig) (*Decoder, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Decoder{cfg: cfg}, nil
}

// allocate makes the window's slots and the coefficient scratch on the
// first symbol: a connection that offers FEC but receives no protected
// packet (a peer without FEC, a client that goes silent) holds none of it.
func (d *Decoder) allocate() {
	if d.slots != nil {
		return
	}
	size := ringSize(d.cfg.MaxWindow)
	d.slots = make([]sourceSlot, size)
	d.mask = uint32(size - 1)
	d.coefs = make([]byte, d.cfg.MaxWindow)
}

// Reset returns the decoder to its state after NewDecoder, counters
// included, keeping its buffers for reuse.
func (d *Decoder) Reset() {
	for len(d.rows) > 0 {
		d.drop(d.rows[len(d.rows)-1])
	}
	for i := range d.slots {
		d.slots[i].forget()
	}
	d.started, d.newest, d.floor, d.floorActive = false, 0, 0, false
	d.holes.esis = d.holes.esis[:0]
	d.stats = DecoderStats{}
	d.out = d.out[:0]
}

// Stats returns the decoder's counters and current memory use.
func (d *Decoder) Stats() DecoderStats {
	st := d.stats
	st.Pending = len(d.rows)
	st.Missing = len(d.holes.esis)
	for _, eq := range d.rows {
		st.Terms += len(eq.cols)
		st.MemoryBytes += eq.memory()
	}
	for _, eq := range d.pool.free {
		st.MemoryBytes += eq.memory()
	}
	for i := range d.slots {
		st.MemoryBytes += cap(d.slots[i].coded)
	}
	for _, b := range d.spare {
		st.MemoryBytes += cap(b)
	}
	st.MemoryBytes += 4 * cap(d.holes.esis)
	return st
}

func (eq *equation) memory() int { return cap(eq.data) + cap(eq.coefs) + 4*cap(eq.cols) }

// AddSource gives the decoder the source symbol esi. It returns the
// symbols this made recoverable (when esi was an unknown of held
// equations). A source already received or recovered, older than the
// window, or longer than MaxSymbolSize is ignored.
func (d *Decoder) AddSource(esi uint32, payload []byte) []Recovered {
	d.allocate()
	d.stats.Sources++
	d.out = d.out[:0]
	switch {
	case len(payload) > d.cfg.MaxSymbolSize:
		d.stats.Oversized++
		return nil
	case !d.inWindow(esi):
		d.stats.Late++
		return nil
	}
	d.advance(esi)
	d.holes.remove(esi)
	s := &d.slots[esi&d.mask]
	tracked := s.state == slotUnknown && s.esi == esi
	if !tracked && s.state != slotEmpty && s.esi == esi {
		d.stats.Duplicates++
		return nil
	}
	pivot, bound := s.pivot, s.bound
	s.forget()
	s.esi, s.state = esi, slotReceived
	s.coded = putCodedSymbol(s.coded, payload, d.cfg.MaxSymbolSize)
	if tracked {
		d.substituteSource(esi, s.coded, pivot, bound)
	}
	return d.results()
}

// results returns the symbols recovered by the current call, or nil.
func (d *Decoder) results() []Recovered {
	if len(d.out) == 0 {
		return nil
	}
	return d.out
}

// AddRepair gives the decoder a repair packet (Repair FEC Payload ID then
// the coded symbol) and returns the source symbols it made recoverable.
// It returns an error, leaving the decoder unchanged, when the packet is
// malformed or contradicts the known symbols.
func (d *Decoder) AddRepair(packet []byte) ([]Recovered, error) {
	d.allocate()
	d.stats.Repairs++
	d.out = d.out[:0]
	rep, err := d.parseRepair(packet)
	if err != nil {
		d.stats.Rejected++
		return nil, err
	}
	if esiBefore(rep.id.FirstESI, d.windowStartAfter(rep.id.LastESI())) {
		d.stats.Useless++
		return nil, nil
	}
	eq, err := d.equationFor(rep)
	if err != nil {
		d.stats.Rejected++
		return nil, err
	}
	if eq == nil {
		d.stats.Useless++
		return nil, nil
	}
	if err := d.addEquation(eq, rep); err != nil {
		d.stats.Rejected++
		return nil, err
	}
	return d.results(), nil
}

// repair is a parsed repair packet.
type repair struct {
	id     RepairID
	symbol []byte // the coded symbol, E bytes (aliases the packet)
}

// parseRepair checks the packet's shape against the configuration.
func (d *Decoder) parseRepair(packet []byte) (repair, error) {
	id, err := ParseRepairID(packet)
	if err != nil {
		return repair{}, err
	}
	if int(id.NSS) > d.cfg.MaxWindow {
		return repair{}, fmt.Errorf("%w: NSS %d, MaxWindow %d", ErrWindowTooLarge, id.NSS, d.cfg.MaxWindow)
	}
	symbol := packet[RepairIDLen:]
	if len(symbol) < symbolLenSize || len(symbol) > d.cfg.MaxSymbolSize+symbolLenSize {
		return repair{}, fmt.Errorf("%w: E = %d, allowed %d..%d", ErrSymbolSize, len(symbol), symbolLenSize, d.cfg.MaxSymbolSize+symbolLenSize)
	}
	return repair{id: id, symbol: symbol}, nil
}
