package fec

import "fmt"

// Turning a repair packet into an equation over the unknowns of its
// window (RFC 8681 section 3.7.2 read backwards): subtract every known
// symbol, then reduce against the held equations.

// reduction is one step of reducing a new equation: add coef * row.
type reduction struct {
	row  *equation
	coef byte
}

// equationFor returns the repair's equation reduced against the held
// ones and normalized, or nil when the repair brings nothing new (no
// unknown in its window, zero coefficients on every unknown, or implied
// by the held equations). It returns ErrInconsistent when the repair
// contradicts the known symbols. It changes no decoder state; on return,
// d.unknowns lists the window's unknown ESIs.
func (d *Decoder) equationFor(rep repair) (*equation, error) {
	d.unknowns = d.unknowns[:0]
	if !d.mayHaveUnknown(rep.id.FirstESI, rep.id.LastESI()) {
		// The common case at low loss: nothing to learn, so no work at
		// all, not even a look at the coded symbol.
		return nil, nil
	}
	cc := d.coefs[:rep.id.NSS]
	generateCoefficients(rep.id.Key, cc, rep.id.DT)
	eq := d.pool.get()
	if err := d.splitWindow(rep, cc, eq); err != nil {
		d.pool.put(eq)
		return nil, err
	}
	if len(eq.cols) == 0 {
		// Every symbol is known after all (it had been received before
		// the decoder's first packet), or, with DT < 15, the repair
		// combines known symbols only.
		d.pool.put(eq)
		return nil, nil
	}
	eq.data = append(eq.data[:0], rep.symbol...)
	MulAddSlices(d.cs, d.ins, eq.data)
	d.reduceAgainstHeld(eq)
	if len(eq.cols) == 0 {
		// Implied by the held equations: then its data must reduce to
		// zero too, or something the decoder holds is corrupt.
		consistent := allZero(eq.data)
		d.pool.put(eq)
		if !consistent {
			return nil, fmt.Errorf("%w: redundant repair (key %d) with different data", ErrInconsistent, rep.id.Key)
		}
		return nil, nil
	}
	eq.normalize()
	return eq, nil
}

// splitWindow walks the repair's window once, without GF(2^8) work: the
// unknowns with a non-zero coefficient become eq's columns, all unknowns
// go to d.unknowns, and the known terms to d.cs and d.ins for one fused
// kernel call. It checks the symbol size E against the known symbols:
// none may be longer, and when all are known the longest must be exactly
// E (the encoder's choice of E).
func (d *Decoder) splitWindow(rep repair, cc []byte, eq *equation) error {
	e := len(rep.symbol)
	d.cs, d.ins = d.cs[:0], d.ins[:0]
	longest := 0
	for j, c := range cc {
		esi := rep.id.FirstESI + uint32(j)
		coded, ok := d.known(esi)
		switch {
		case !ok:
			d.unknowns = append(d.unknowns, esi)
			if c != 0 {
				eq.cols = append(eq.cols, esi)
				eq.coefs = append(eq.coefs, c)
			}
		case len(coded) > e:
			return fmt.Errorf("%w: source %d has %d coded bytes, repair E = %d", ErrInconsistent, esi, len(coded), e)
		default:
			longest = max(longest, len(coded))
			if c != 0 {
				d.cs, d.ins = append(d.cs, c), append(d.ins, coded)
			}
		}
	}
	if len(d.unknowns) == 0 && longest != e {
		return fmt.Errorf("%w: repair E = %d, longest source of its window %d", ErrInconsistent, e, longest)
	}
	return nil
}

// reduceAgainstHeld eliminates from eq every unknown that is the pivot of
// a held equation. A held equation contains no other pivot, so the
// coefficients read before reducing stay valid throughout.
func (d *Decoder) reduceAgainstHeld(eq *equation) {
	d.reduce = d.reduce[:0]
	for i, esi := range eq.cols {
		if s := d.lookup(esi); s != nil && s.pivot != nil {
			d.reduce = append(d.reduce, reduction{row: s.pivot, coef: eq.coefs[i]})
		}
	}
	for _, r := range d.reduce {
		d.merger.addScaled(eq, r.coef, r.row)
	}
	clear(d.reduce)
}
