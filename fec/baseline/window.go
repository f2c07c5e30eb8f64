package baseline

// sourceWindow is a baseline decoder's memory of source symbols: the coded
// symbols (see symbol.go) of the most recent ESIs, received or
// rebuilt, in a ring indexed by ESI. It keeps the ESIs within size of the
// newest one seen, in 32-bit serial-number order so that ESIs may wrap;
// older ones are forgotten, which bounds the decoder's memory. Slot
// buffers are reused, so storing a source allocates only while buffers
// grow to the packet size.
type sourceWindow struct {
	slots   []windowSlot
	mask    uint32
	newest  uint32
	started bool // a source has been stored; newest is meaningful
}

type windowSlot struct {
	esi   uint32
	known bool
	coded []byte // coded symbol, without padding
}

// windowSlack is added to twice a decoder's span so that sources and
// repairs that arrive somewhat reordered are still usable.
const windowSlack = 64

// newSourceWindow returns a window that keeps at least 2*span+windowSlack
// ESIs (rounded up to a power of two): a repair arriving after the last
// source it covers still finds the first one, with room for reordering.
func newSourceWindow(span int) *sourceWindow {
	size := 1
	for size < 2*span+windowSlack {
		size <<= 1
	}
	return &sourceWindow{slots: make([]windowSlot, size), mask: uint32(size - 1)}
}

// size is the number of ESIs the window keeps.
func (w *sourceWindow) size() int { return len(w.slots) }

// age is how far esi lies behind the newest ESI (negative: ahead), in
// serial-number arithmetic.
func (w *sourceWindow) age(esi uint32) int64 {
	return int64(int32(w.newest - esi))
}

// forgotten reports whether esi is too old for the window: a source of
// that ESI can be neither stored nor looked up any more.
func (w *sourceWindow) forgotten(esi uint32) bool {
	return w.started && w.age(esi) >= int64(len(w.slots))
}

// lookup returns the coded symbol of esi if the window holds it.
func (w *sourceWindow) lookup(esi uint32) ([]byte, bool) {
	if !w.started || w.forgotten(esi) || w.age(esi) < 0 {
		return nil, false
	}
	s := &w.slots[esi&w.mask]
	if !s.known || s.esi != esi {
		return nil, false
	}
	return s.coded, true
}

// storePayload keeps payload's coded symbol for esi. It returns the stored
// symbol and true, or false if esi is already known or forgotten.
func (w *sourceWindow) storePayload(esi uint32, payload []byte) ([]byte, bool) {
	s := w.claim(esi)
	if s == nil {
		return nil, false
	}
	s.coded = appendCoded(s.coded[:0], payload)
	return s.coded, true
}

// storeCoded keeps a rebuilt coded symbol for esi (copied), reporting
// false if esi is already known or forgotten.
func (w *sourceWindow) storeCoded(esi uint32, coded []byte) bool {
	s := w.claim(esi)
	if s == nil {
		return false
	}
	s.coded = append(s.coded[:0], coded...)
	return true
}

// claim returns the slot that will hold esi, moving the window forward if
// esi is the newest ESI yet, or nil if esi is known or forgotten.
func (w *sourceWindow) claim(esi uint32) *windowSlot {
	switch {
	case !w.started:
		w.started = true
		w.newest = esi
	case w.age(esi) < 0:
		w.advance(esi)
	case w.forgotten(esi):
		return nil
	}
	s := &w.slots[esi&w.mask]
	if s.known && s.esi == esi {
		return nil
	}
	s.esi, s.known = esi, true
	return s
}

// advance makes esi the newest ESI, emptying the slots of the ESIs it
// skips over so that no slot ever holds an ESI outside the window.
func (w *sourceWindow) advance(esi uint32) {
	step := esi - w.newest
	if uint64(step) >= uint64(len(w.slots)) {
		for i := range w.slots {
			w.slots[i].known = false
		}
	} else {
		for e := w.newest + 1; e != esi+1; e++ {
			w.slots[e&w.mask].known = false
		}
	}
	w.newest = esi
}
