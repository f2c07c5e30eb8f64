package fec

// The decoder's holes: the ESIs of the window, up to the newest, that were
// neither received nor recovered, oldest first. They let a repair whose
// window lost nothing be recognised by a binary search instead of a walk
// over its NSS symbols, which matters because at low loss most repairs
// are such.
//
// ESIs before the first packet the decoder saw are not holes but are not
// known either; floor marks them until the window has moved past it.

type holeSet struct {
	esis []uint32
}

// search returns the index of the first hole at or after esi.
func (h *holeSet) search(esi uint32) int {
	lo, hi := 0, len(h.esis)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if esiBefore(h.esis[mid], esi) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// push adds esi, which must be newer than every hole.
func (h *holeSet) push(esi uint32) { h.esis = append(h.esis, esi) }

// remove deletes esi if it is a hole.
func (h *holeSet) remove(esi uint32) {
	n := len(h.esis)
	if n > 0 && h.esis[n-1] == esi { // the usual case: the newest ESI
		h.esis = h.esis[:n-1]
		return
	}
	if i := h.search(esi); i < n && h.esis[i] == esi {
		h.esis = append(h.esis[:i], h.esis[i+1:]...)
	}
}

// dropBefore deletes the holes before start.
func (h *holeSet) dropBefore(start uint32) {
	if i := h.search(start); i > 0 {
		h.esis = h.esis[:copy(h.esis, h.esis[i:])]
	}
}

// anyIn reports whether a hole lies in [first, last].
func (h *holeSet) anyIn(first, last uint32) bool {
	i := h.search(first)
	return i < len(h.esis) && !esiBefore(last, h.esis[i])
}

// mayHaveUnknown reports whether the window [first, last] may hold a
// symbol that is not known; false guarantees that all are known.
func (d *Decoder) mayHaveUnknown(first, last uint32) bool {
	switch {
	case !d.started || esiBefore(d.newest, last):
		return true
	case d.floorActive && esiBefore(first, d.floor):
		return true
	}
	return d.holes.anyIn(first, last)
}
