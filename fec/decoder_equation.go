package fec

// A pending equation of the decoder: sum(coefs[i] * x[cols[i]]) = data,
// where x[esi] is the coded symbol (length prefix + payload, zero padded)
// of an unknown source ESI. Known symbols have already been subtracted out,
// so cols lists unknowns only, oldest first in serial order.
//
// Once an equation is held by the decoder, cols[0] is its pivot and
// coefs[0] == 1, every other column is newer than the pivot, and no other
// held equation has a non-zero coefficient at that pivot (reduced row
// echelon form, built progressively). An equation whose only column is its
// pivot is solved: data is the pivot's coded symbol.
type equation struct {
	cols  []uint32
	coefs []byte
	data  []byte
	// index is the equation's position in Decoder.rows, or -1 when it is
	// not held.
	index int
}

// held reports whether the decoder currently holds the equation.
func (eq *equation) held() bool { return eq.index >= 0 }

// pivot is the equation's pivot ESI; the equation must have a column.
func (eq *equation) pivot() uint32 { return eq.cols[0] }

// solved reports whether the equation determines its pivot alone.
func (eq *equation) solved() bool { return len(eq.cols) == 1 }

// find returns the index of esi in eq.cols, or -1. Columns are sorted in
// serial order and span less than 2^31, so binary search is valid.
func (eq *equation) find(esi uint32) int {
	lo, hi := 0, len(eq.cols)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if esiBefore(eq.cols[mid], esi) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(eq.cols) && eq.cols[lo] == esi {
		return lo
	}
	return -1
}

// removeAt deletes column i.
func (eq *equation) removeAt(i int) {
	eq.cols = append(eq.cols[:i], eq.cols[i+1:]...)
	eq.coefs = append(eq.coefs[:i], eq.coefs[i+1:]...)
}

// normalize scales the equation so that its pivot coefficient is 1.
func (eq *equation) normalize() {
	c := eq.coefs[0]
	if c == 1 {
		return
	}
	inv := gfInv(c)
	for i, v := range eq.coefs {
		eq.coefs[i] = gfMul(inv, v)
	}
	MulSlice(inv, eq.data, eq.data)
}

// rowMerger adds scaled equations into others. It owns the scratch
// column lists that merging swaps in, so that merging allocates nothing
// once the lists have grown.
type rowMerger struct {
	cols  []uint32
	coefs []byte
}

// addScaled sets dst += c * src, columns and data (in GF(2^8) addition is
// subtraction, so this also eliminates). Columns that cancel are dropped.
func (m *rowMerger) addScaled(dst *equation, c byte, src *equation) {
	if c == 0 {
		return
	}
	m.mergeColumns(dst, c, src)
	dst.data = growZeroed(dst.data, len(src.data))
	MulAddSlice(c, src.data, dst.data)
}

// mergeColumns merges c*src's columns into dst's, both sorted oldest
// first, and swaps the result into dst.
func (m *rowMerger) mergeColumns(dst *equation, c byte, src *equation) {
	cols, coefs := m.cols[:0], m.coefs[:0]
	i, j := 0, 0
	for i < len(dst.cols) || j < len(src.cols) {
		switch {
		case j == len(src.cols) || (i < len(dst.cols) && esiBefore(dst.cols[i], src.cols[j])):
			cols, coefs = append(cols, dst.cols[i]), append(coefs, dst.coefs[i])
			i++
		case i == len(dst.cols) || esiBefore(src.cols[j], dst.cols[i]):
			cols, coefs = append(cols, src.cols[j]), append(coefs, gfMul(c, src.coefs[j]))
			j++
		default: // same column in both
			if v := dst.coefs[i] ^ gfMul(c, src.coefs[j]); v != 0 {
				cols, coefs = append(cols, dst.cols[i]), append(coefs, v)
			}
			i++
			j++
		}
	}
	m.cols, dst.cols = dst.cols[:0], cols
	m.coefs, dst.coefs = dst.coefs[:0], coefs
}

// growZeroed extends b with zeros to length n if it is shorter (a symbol
// is implicitly zero past its end).
func growZeroed(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	old := len(b)
	if cap(b) >= n {
		b = b[:n]
		clear(b[old:])
		return b
	}
	grown := make([]byte, n, max(n, 2*cap(b)))
	copy(grown, b)
	return grown
}

// equationPool recycles equations and their buffers.
type equationPool struct {
	free []*equation
}

func (p *equationPool) get() *equation {
	if n := len(p.free); n > 0 {
		eq := p.free[n-1]
		p.free = p.free[:n-1]
		return eq
	}
	return &equation{index: -1}
}

func (p *equationPool) put(eq *equation) {
	eq.cols, eq.coefs, eq.data = eq.cols[:0], eq.coefs[:0], eq.data[:0]
	eq.index = -1
	p.free = append(p.free, eq)
}
