package fec

// The decoder's memory of source symbols: a ring of slots, one per ESI of
// the window (newest-MaxWindow, newest], indexed by esi&mask. The ring
// size is a power of two so that the index is continuous across the 2^32
// -> 0 wrap of ESIs. Invariant: every slot that is not empty holds an ESI
// inside the current window; slots are cleared as their ESI leaves.

type slotState uint8

const (
	slotEmpty     slotState = iota // nothing known about the slot's ESI
	slotUnknown                    // lost (so far); some repair covered it
	slotReceived                   // the source arrived
	slotRecovered                  // rebuilt by decoding
)

type sourceSlot struct {
	esi   uint32
	state slotState
	// bound is, for an unknown, the smallest symbol size E of the repairs
	// covering it: its coded length cannot exceed it (encoder's E is the
	// window's largest symbol), which lets recovery reject impossible
	// lengths.
	bound int
	// pivot is the held equation whose pivot is this unknown, if any.
	pivot *equation
	// coded is the coded symbol (length prefix + payload) once known.
	coded []byte
}

// lookup returns the slot of esi if it holds esi, else nil.
func (d *Decoder) lookup(esi uint32) *sourceSlot {
	s := &d.slots[esi&d.mask]
	if s.state == slotEmpty || s.esi != esi {
		return nil
	}
	return s
}

// known returns esi's coded symbol when it was received or recovered.
func (d *Decoder) known(esi uint32) ([]byte, bool) {
	s := d.lookup(esi)
	if s == nil || (s.state != slotReceived && s.state != slotRecovered) {
		return nil, false
	}
	return s.coded, true
}

// inWindow reports whether esi is within MaxWindow of the newest ESI, or
// ahead of it. Before the first packet every ESI is.
func (d *Decoder) inWindow(esi uint32) bool {
	return !d.started || esiBefore(d.newest, esi) || d.newest-esi < uint32(d.cfg.MaxWindow)
}

// windowStartAfter is the oldest ESI the window would hold once an ESI
// `last` was seen.
func (d *Decoder) windowStartAfter(last uint32) uint32 {
	newest := last
	if d.started && !esiBefore(d.newest, last) {
		newest = d.newest
	}
	return newest - uint32(d.cfg.MaxWindow) + 1
}

// advance makes esi the newest ESI if it is ahead of the current one:
// the ESIs passed over become holes (the caller removes esi itself if it
// is received), symbols that fall out of the window are forgotten, and so
// are the equations pivoted on them (RREF keeps a pivot in no other
// equation and every column of an equation is at or after its pivot, so
// such an equation tells nothing about the symbols still in the window).
func (d *Decoder) advance(esi uint32) {
	if !d.started {
		d.started, d.newest = true, esi
		d.floor, d.floorActive = esi, true
		d.holes.push(esi)
		return
	}
	if !esiBefore(d.newest, esi) {
		return
	}
	window := uint32(d.cfg.MaxWindow)
	oldStart := d.newest - window + 1
	newStart := esi - window + 1
	firstNew := d.newest + 1
	if esi-d.newest > window {
		firstNew = newStart
	}
	d.newest = esi
	if d.floorActive && esiBefore(d.floor, newStart) {
		d.floorActive = false
	}
	d.dropEquationsBefore(newStart)
	d.holes.dropBefore(newStart)
	for e := firstNew; e != esi+1; e++ {
		d.holes.push(e)
	}
	if gone := newStart - oldStart; gone >= uint32(len(d.slots)) {
		for i := range d.slots {
			d.slots[i].forget()
		}
		return
	}
	for e := oldStart; e != newStart; e++ {
		if s := &d.slots[e&d.mask]; s.esi == e {
			s.forget()
		}
	}
}

// forget empties a slot, keeping its buffer for reuse.
func (s *sourceSlot) forget() {
	s.state, s.pivot, s.coded = slotEmpty, nil, s.coded[:0]
}

// track marks esi as an unknown covered by a repair of symbol size e.
func (d *Decoder) track(esi uint32, e int) {
	s := &d.slots[esi&d.mask]
	if s.state == slotEmpty || s.esi != esi {
		s.forget()
		s.esi, s.state, s.bound = esi, slotUnknown, e
		return
	}
	if s.state == slotUnknown {
		s.bound = min(s.bound, e)
	}
}
