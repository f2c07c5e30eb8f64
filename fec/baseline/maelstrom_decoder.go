package baseline

import (
	"fmt"
	"slices"

	"github.com/satquic/satquic/fec"
)

// peelingDecoder is the decoder of every XOR baseline (Maelstrom, and XOR
// parity as its one-layer case). A repair is the XOR of the sources it
// covers; once every covered source but one is known, XORing the known
// ones out of it leaves the missing one. A rebuilt source is known in
// turn and may complete other repairs of any layer, so recoveries cascade
// (the peeling decoder of LT and Maelstrom codes).
//
// A repair that still misses two or more sources waits in pending with
// the known sources already XORed out. Memory is bounded: the sources are
// kept in a sourceWindow of twice the largest span a repair may cover
// (plus slack), a pending repair is dropped once its first source leaves
// that window, and at most maxPending repairs wait (the oldest go first).
type peelingDecoder struct {
	window     *sourceWindow
	maxSpan    int
	maxPending int
	pending    []*pendingXOR // in arrival order
	free       []*pendingXOR // recycled entries, with their buffers
	work       []uint32      // ESIs newly known, to XOR out of pending repairs
	missing    []uint32      // scratch for AddRepair
}

// pendingXOR is a repair that misses more than one source.
type pendingXOR struct {
	h       xorRepairHeader
	body    []byte   // the repair XOR every covered source known so far
	missing []uint32 // ESIs of the covered sources still unknown
}

func newPeelingDecoder(cfg MaelstromConfig) *peelingDecoder {
	d := &peelingDecoder{maxSpan: cfg.maxSpan()}
	d.window = newSourceWindow(d.maxSpan)
	// The repairs whose first source is in the window: per layer, the
	// window's worth of repairs plus one partly covered repair per bin.
	for _, interleave := range cfg.Interleaves {
		d.maxPending += d.window.size()/cfg.Window + interleave
	}
	return d
}

// AddSource stores a received source and XORs it out of the pending
// repairs that miss it, returning the sources this rebuilds.
func (d *peelingDecoder) AddSource(esi uint32, payload []byte) []fec.Recovered {
	if _, stored := d.window.storePayload(esi, payload); !stored || len(d.pending) == 0 {
		return nil
	}
	d.work = append(d.work[:0], esi)
	out := d.propagate(nil)
	d.expire()
	return out
}

// AddRepair checks a repair against the known sources, rebuilds its one
// missing source if that is all it lacks, or keeps it for later.
func (d *peelingDecoder) AddRepair(packet []byte) ([]fec.Recovered, error) {
	h, body, err := parseXORRepair(packet)
	if err != nil {
		return nil, err
	}
	if h.span() > d.maxSpan {
		return nil, fmt.Errorf("%w: xor repair spans %d ESIs, this decoder keeps repairs spanning at most %d", ErrInconsistentRepair, h.span(), d.maxSpan)
	}
	if d.window.forgotten(h.First) {
		return nil, nil // too old to help: its first source is forgotten
	}
	if slices.ContainsFunc(d.pending, func(p *pendingXOR) bool { return p.h == h }) {
		return nil, nil // a duplicate of a waiting repair
	}
	if err := d.collectMissing(h, len(body)); err != nil {
		return nil, err
	}
	if len(d.missing) == 0 {
		return nil, nil
	}
	p := d.newPending(h, body)
	if len(p.missing) > 1 {
		d.keep(p)
		return nil, nil
	}
	return d.resolveNew(p)
}

// resolveNew rebuilds the one source a new repair misses and lets it
// cascade. A rebuilt symbol that fails its checks makes the repair
// inconsistent: it is refused and the decoder left unchanged.
func (d *peelingDecoder) resolveNew(p *pendingXOR) ([]fec.Recovered, error) {
	defer func() { d.free = append(d.free, p) }()
	sym, err := d.rebuild(p)
	if err != nil {
		return nil, err
	}
	d.work = d.work[:0]
	out := d.propagate(d.learn(p.missing[0], sym, nil))
	d.expire()
	return out, nil
}

// expire releases the pending repairs whose first source the window
// forgot: a rebuilt source may have moved the window on.
func (d *peelingDecoder) expire() {
	d.pending = slices.DeleteFunc(d.pending, func(p *pendingXOR) bool {
		if d.window.forgotten(p.h.First) {
			d.free = append(d.free, p)
			return true
		}
		return false
	})
}

// collectMissing lists in d.missing the sources of h the window lacks,
// and checks that the known ones fit the repair's symbol size.
func (d *peelingDecoder) collectMissing(h xorRepairHeader, bodyLen int) error {
	d.missing = d.missing[:0]
	for j := range int(h.Count) {
		esi := h.esi(j)
		coded, ok := d.window.lookup(esi)
		if !ok {
			d.missing = append(d.missing, esi)
			continue
		}
		if len(coded) > bodyLen {
			return fmt.Errorf("%w: source %d has a %d-byte symbol, larger than the repair's %d", ErrInconsistentRepair, esi, len(coded), bodyLen)
		}
	}
	return nil
}

// newPending copies the repair and XORs its known sources out of it; the
// missing ESIs are taken from d.missing.
func (d *peelingDecoder) newPending(h xorRepairHeader, body []byte) *pendingXOR {
	var p *pendingXOR
	if n := len(d.free); n > 0 {
		p, d.free = d.free[n-1], d.free[:n-1]
	} else {
		p = new(pendingXOR)
	}
	p.h = h
	p.body = append(p.body[:0], body...)
	p.missing = append(p.missing[:0], d.missing...)
	for j := range int(h.Count) {
		if coded, ok := d.window.lookup(h.esi(j)); ok {
			fec.XorSlice(coded, p.body)
		}
	}
	return p
}

// keep adds a repair to the pending list, dropping the oldest when full.
func (d *peelingDecoder) keep(p *pendingXOR) {
	if len(d.pending) >= d.maxPending {
		d.release(0)
	}
	d.pending = append(d.pending, p)
}

// release removes pending[i], keeping the arrival order.
func (d *peelingDecoder) release(i int) {
	d.free = append(d.free, d.pending[i])
	d.pending = slices.Delete(d.pending, i, i+1)
}

// rebuild checks the body of a repair that misses exactly one source: it
// is now that source's padded coded symbol.
func (d *peelingDecoder) rebuild(p *pendingXOR) (rebuiltSymbol, error) {
	sym, err := checkRebuilt(p.body)
	if err != nil {
		return rebuiltSymbol{}, fmt.Errorf("source %d from xor repair at %d: %w", p.missing[0], p.h.First, err)
	}
	return sym, nil
}

// learn stores a rebuilt source, queues it for propagation and appends its
// report to out.
func (d *peelingDecoder) learn(esi uint32, sym rebuiltSymbol, out []fec.Recovered) []fec.Recovered {
	if !d.window.storeCoded(esi, sym.coded) {
		return out
	}
	d.work = append(d.work, esi)
	if sym.protected {
		out = append(out, recoveredCopy(esi, sym))
	}
	return out
}

// propagate XORs each ESI of d.work out of the pending repairs that miss
// it, rebuilding sources as repairs come down to one missing, until no
// new source is learnt.
func (d *peelingDecoder) propagate(out []fec.Recovered) []fec.Recovered {
	for len(d.work) > 0 {
		esi := d.work[len(d.work)-1]
		d.work = d.work[:len(d.work)-1]
		for i := 0; i < len(d.pending); {
			// Looked up anew each time: a source learnt meanwhile may
			// have moved the window on and reused this one's slot.
			coded, ok := d.window.lookup(esi)
			if !ok {
				break
			}
			var removed bool
			out, removed = d.apply(i, esi, coded, out)
			if !removed {
				i++
			}
		}
	}
	return out
}

// apply XORs a newly known source out of pending[i] if it misses it, and
// releases the repair when it is used up, stale or inconsistent. It
// reports whether pending[i] was removed.
func (d *peelingDecoder) apply(i int, esi uint32, coded []byte, out []fec.Recovered) ([]fec.Recovered, bool) {
	p := d.pending[i]
	if d.window.forgotten(p.h.First) {
		d.release(i)
		return out, true
	}
	at := slices.Index(p.missing, esi)
	if at < 0 {
		return out, false
	}
	if len(coded) > len(p.body) {
		d.release(i) // this source contradicts the repair
		return out, true
	}
	fec.XorSlice(coded, p.body)
	p.missing = slices.Delete(p.missing, at, at+1)
	if len(p.missing) > 1 {
		return out, false
	}
	if len(p.missing) == 1 {
		if sym, err := d.rebuild(p); err == nil {
			out = d.learn(p.missing[0], sym, out)
		}
	}
	d.release(i)
	return out, true
}
