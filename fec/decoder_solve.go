package fec

import "fmt"

// Holding equations in reduced row echelon form and solving them.
//
// Inserting an equation with pivot p (its oldest unknown, already reduced
// against every held pivot) eliminates p from the held equations that
// contain it; any of them, and the new one, that is left with its pivot
// alone is solved. Insertion is split in two so that a repair which would
// rebuild an impossible symbol is rejected before anything changes:
// prepareElimination computes and checks the would-be solutions on the
// side, commitElimination applies them.

// elimTarget is a held equation containing the new pivot: it receives
// coef * the new equation. solution is its data afterwards, computed in
// advance when that leaves it solved.
type elimTarget struct {
	row      *equation
	coef     byte
	solution []byte
}

// windowBound is the symbol size of a repair being added, which bounds
// the coded length of every symbol of its window before track() records
// it. A zero nss means no such repair.
type windowBound struct {
	first uint32
	nss   uint32
	e     int
}

func (w windowBound) covers(esi uint32) bool { return esi-w.first < w.nss }

// addEquation inserts the equation of repair rep, which equationFor built.
// It fails, with the decoder unchanged, if a symbol it would rebuild is
// impossible.
func (d *Decoder) addEquation(eq *equation, rep repair) error {
	wb := windowBound{first: rep.id.FirstESI, nss: uint32(rep.id.NSS), e: len(rep.symbol)}
	if err := d.prepareElimination(eq, wb); err != nil {
		d.pool.put(eq)
		return err
	}
	d.advance(rep.id.LastESI())
	for _, esi := range d.unknowns {
		d.track(esi, wb.e)
	}
	d.commitElimination(eq)
	return nil
}

// prepareElimination fills d.targets for inserting eq and checks every
// symbol the insertion would solve. On error d.targets is released.
func (d *Decoder) prepareElimination(eq *equation, wb windowBound) error {
	p := eq.pivot()
	d.targets = d.targets[:0]
	if eq.solved() {
		if err := validateSolved(eq.data, d.bound(p, wb)); err != nil {
			return fmt.Errorf("source %d: %w", p, err)
		}
	}
	for _, row := range d.rows {
		i := row.find(p)
		if i < 0 {
			continue
		}
		t := elimTarget{row: row, coef: row.coefs[i]}
		if leavesSingleton(row, i, t.coef, eq) {
			t.solution = d.spareBuffer(row.data, len(eq.data))
			MulAddSlice(t.coef, eq.data, t.solution)
			d.targets = append(d.targets, t)
			if err := validateSolved(t.solution, d.bound(row.pivot(), wb)); err != nil {
				d.releaseTargets()
				return fmt.Errorf("source %d: %w", row.pivot(), err)
			}
			continue
		}
		d.targets = append(d.targets, t)
	}
	return nil
}

// leavesSingleton reports whether row + c*eq has row's pivot as its only
// column, where row's column i is eq's pivot: nothing else may sit between
// row's pivot and column i, and row's later columns must be exactly c
// times eq's.
func leavesSingleton(row *equation, i int, c byte, eq *equation) bool {
	if i != 1 || len(row.cols)-2 != len(eq.cols)-1 {
		return false
	}
	for m, esi := range eq.cols[1:] {
		if row.cols[2+m] != esi || row.coefs[2+m] != gfMul(c, eq.coefs[1+m]) {
			return false
		}
	}
	return true
}

// commitElimination applies d.targets, holds eq and recovers what is
// solved. Targets dropped meanwhile (their pivot left the window) are
// skipped.
func (d *Decoder) commitElimination(eq *equation) {
	for i := range d.targets {
		t := &d.targets[i]
		switch {
		case !t.row.held():
		case t.solution != nil:
			t.row.data, t.solution = t.solution, t.row.data
			t.row.cols, t.row.coefs = t.row.cols[:1], t.row.coefs[:1]
		default:
			d.merger.addScaled(t.row, t.coef, eq)
		}
	}
	d.hold(eq)
	if eq.held() && eq.solved() {
		d.recover(eq)
	}
	for _, t := range d.targets {
		if t.row.held() && t.row.solved() {
			d.recover(t.row)
		}
	}
	d.releaseTargets()
	d.enforcePending()
}

// releaseTargets returns the targets' spare buffers.
func (d *Decoder) releaseTargets() {
	for i := range d.targets {
		if b := d.targets[i].solution; b != nil {
			d.spare = append(d.spare, b[:0])
		}
		d.targets[i] = elimTarget{}
	}
	d.targets = d.targets[:0]
}

// spareBuffer returns a recycled buffer holding src zero-extended to at
// least n bytes.
func (d *Decoder) spareBuffer(src []byte, n int) []byte {
	var b []byte
	if k := len(d.spare); k > 0 {
		b, d.spare = d.spare[k-1][:0], d.spare[:k-1]
	}
	b = append(b, src...)
	return growZeroed(b, n)
}

// bound is the largest coded length esi can have: the smallest symbol size
// of the repairs that covered it, including wb's.
func (d *Decoder) bound(esi uint32, wb windowBound) int {
	b := MaxSymbolSize + symbolLenSize
	if s := d.lookup(esi); s != nil && s.state == slotUnknown {
		b = s.bound
	}
	if wb.covers(esi) {
		b = min(b, wb.e)
	}
	return b
}

// validateSolved checks that data is a possible coded symbol: a length
// prefix that fits both data and bound, then zero padding.
func validateSolved(data []byte, bound int) error {
	if len(data) < symbolLenSize {
		return fmt.Errorf("%w: rebuilt symbol of %d bytes", ErrInconsistent, len(data))
	}
	end := symbolLenSize + (int(data[0])<<8 | int(data[1]))
	if end > len(data) || end > bound {
		return fmt.Errorf("%w: rebuilt symbol claims %d coded bytes, at most %d possible", ErrInconsistent, end, min(len(data), bound))
	}
	if !allZero(data[end:]) {
		return fmt.Errorf("%w: rebuilt symbol has non-zero padding", ErrInconsistent)
	}
	return nil
}

// hold adds eq to the held equations, pivoted on its first column. The
// pivot's slot is tracked by construction (every column comes from a
// repair's window, whose unknowns track() recorded); if it were not, eq
// is dropped rather than held without its pivot link.
func (d *Decoder) hold(eq *equation) {
	s := d.lookup(eq.pivot())
	if s == nil || s.state != slotUnknown {
		d.stats.Contradicted++
		d.pool.put(eq)
		return
	}
	eq.index = len(d.rows)
	d.rows = append(d.rows, eq)
	s.pivot = eq
}

// unhold removes eq from the held equations without recycling it.
func (d *Decoder) unhold(eq *equation) {
	last := d.rows[len(d.rows)-1]
	d.rows[eq.index] = last
	last.index = eq.index
	d.rows[len(d.rows)-1] = nil
	d.rows = d.rows[:len(d.rows)-1]
	if s := d.lookup(eq.pivot()); s != nil && s.pivot == eq {
		s.pivot = nil
	}
	eq.index = -1
}

// drop abandons a held equation.
func (d *Decoder) drop(eq *equation) {
	d.unhold(eq)
	d.pool.put(eq)
}

// recover turns a solved equation into a recovered symbol, after a last
// check of its format; an impossible symbol means a corrupt equation,
// which is dropped.
func (d *Decoder) recover(eq *equation) {
	p := eq.pivot()
	s := d.lookup(p)
	if s == nil || s.state != slotUnknown || validateSolved(eq.data, s.bound) != nil {
		d.stats.Contradicted++
		d.drop(eq)
		return
	}
	end := symbolLenSize + (int(eq.data[0])<<8 | int(eq.data[1]))
	d.unhold(eq)
	s.coded, eq.data = eq.data[:end], s.coded[:0]
	s.state = slotRecovered
	d.holes.remove(p)
	d.pool.put(eq)
	d.out = append(d.out, Recovered{ESI: p, Data: s.coded[symbolLenSize:]})
	d.stats.Recovered++
}

// dropEquationsBefore drops the held equations whose pivot is before
// start, i.e. has left the window.
func (d *Decoder) dropEquationsBefore(start uint32) {
	for i := 0; i < len(d.rows); {
		if eq := d.rows[i]; esiBefore(eq.pivot(), start) {
			d.drop(eq) // moves the last equation to i
			d.stats.Dropped++
			continue
		}
		i++
	}
}

// enforcePending drops the equations with the oldest pivots while more
// than MaxPending are held: they are the nearest to leaving the window.
func (d *Decoder) enforcePending() {
	for len(d.rows) > d.cfg.MaxPending {
		oldest := d.rows[0]
		for _, eq := range d.rows[1:] {
			if esiBefore(eq.pivot(), oldest.pivot()) {
				oldest = eq
			}
		}
		d.drop(oldest)
		d.stats.Dropped++
	}
}

// substituteSource moves the newly received symbol esi, an unknown of the
// held equations, to their known side. coded is its coded symbol, pivot
// the equation pivoted on it (if any) and bound its length bound.
func (d *Decoder) substituteSource(esi uint32, coded []byte, pivot *equation, bound int) {
	if len(coded) > bound {
		// A repair covering esi claimed a smaller symbol size: the
		// equations built from it are corrupt.
		d.dropEquationsWith(esi)
		return
	}
	if pivot != nil {
		d.unhold(pivot)
		pivot.data = growZeroed(pivot.data, len(coded))
		XorSlice(coded, pivot.data) // the pivot coefficient is 1
		pivot.removeAt(0)
		d.reinsert(pivot)
		return
	}
	d.solved = d.solved[:0]
	for _, row := range d.rows {
		i := row.find(esi)
		if i < 0 {
			continue
		}
		row.data = growZeroed(row.data, len(coded))
		MulAddSlice(row.coefs[i], coded, row.data)
		row.removeAt(i)
		if row.solved() {
			d.solved = append(d.solved, row)
		}
	}
	for _, row := range d.solved {
		d.recover(row)
	}
	clear(d.solved)
}

// reinsert holds again an equation that lost its pivot to a received
// source. It is still reduced against every other pivot (reduced row
// echelon form), so it only needs a new pivot.
func (d *Decoder) reinsert(eq *equation) {
	if len(eq.cols) == 0 {
		if !allZero(eq.data) {
			d.stats.Contradicted++
		}
		d.pool.put(eq)
		return
	}
	eq.normalize()
	if err := d.prepareElimination(eq, windowBound{}); err != nil {
		d.stats.Contradicted++
		d.pool.put(eq)
		return
	}
	d.commitElimination(eq)
}

// dropEquationsWith drops every held equation that involves esi.
func (d *Decoder) dropEquationsWith(esi uint32) {
	for i := 0; i < len(d.rows); {
		if eq := d.rows[i]; eq.find(esi) >= 0 {
			d.drop(eq)
			d.stats.Contradicted++
			continue
		}
		i++
	}
}
