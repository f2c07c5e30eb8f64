package fec

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestDecoderConfigErrors(t *testing.T) {
	bad := []DecoderConfig{
		{MaxWindow: -1},
		{MaxWindow: MaxNSS + 1},
		{MaxPending: -1},
		{MaxSymbolSize: -1},
		{MaxSymbolSize: MaxSymbolSize + 1},
	}
	for _, cfg := range bad {
		if _, err := NewDecoder(cfg); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%+v: got %v, want ErrBadConfig", cfg, err)
		}
	}
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 50, MaxPending: 500})
	if dec.cfg.MaxPending != 50 || dec.cfg.MaxSymbolSize != MaxSymbolSize {
		t.Fatalf("defaults: %+v", dec.cfg)
	}
	dec = mustDecoder(t, DecoderConfig{})
	if dec.cfg.MaxWindow != MaxNSS || dec.cfg.MaxPending != MaxNSS {
		t.Fatalf("defaults: %+v", dec.cfg)
	}
}

func TestDecoderIgnoresLateAndOversizedSources(t *testing.T) {
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 8, MaxSymbolSize: 10})
	dec.AddSource(100, []byte("a"))
	if recs := dec.AddSource(92, []byte("b")); recs != nil { // 100-92 = 8: just out
		t.Fatalf("late source returned %v", recs)
	}
	dec.AddSource(93, []byte("c")) // just in
	dec.AddSource(101, make([]byte, 11))
	st := dec.Stats()
	if st.Late != 1 || st.Oversized != 1 || st.Sources != 4 {
		t.Fatalf("stats %+v", st)
	}
	if _, ok := dec.known(93); !ok {
		t.Fatal("in-window source not kept")
	}
	if _, ok := dec.known(101); ok {
		t.Fatal("oversized source kept")
	}
}

// Equations whose pivot leaves the window are dropped, and so are the
// slots; a repair older than the window is useless.
func TestDecoderForgetsWhatLeavesTheWindow(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 10, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 20})
	ps := payloads(10)
	feed(t, enc, dec, ps, map[int]bool{1: true, 2: true, 3: true})
	old := mustRepair(t, enc)
	if _, err := dec.AddRepair(old); err != nil {
		t.Fatal(err)
	}
	if st := dec.Stats(); st.Pending != 1 {
		t.Fatalf("pending %d, want 1", st.Pending)
	}
	dec.AddSource(21, []byte("x")) // window is now 2..21: pivot 1 left
	if st := dec.Stats(); st.Pending != 0 || st.Dropped != 1 {
		t.Fatalf("after the pivot left: %+v", st)
	}
	if recs, err := dec.AddRepair(old); err != nil || recs != nil {
		t.Fatalf("stale repair: %v, %v", recs, err)
	}
	if st := dec.Stats(); st.Useless != 1 {
		t.Fatalf("stale repair not counted useless: %+v", st)
	}
	for esi := range uint32(2) {
		if dec.lookup(esi) != nil {
			t.Fatalf("slot of ESI %d still held", esi)
		}
	}
}

func TestDecoderMaxPendingDropsOldestPivot(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 30, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 30, MaxPending: 2})
	lost := map[int]bool{}
	for i := range 30 {
		if i%3 == 0 {
			lost[i] = true // 10 unknowns
		}
	}
	feed(t, enc, dec, payloads(30), lost)
	for range 5 {
		if _, err := dec.AddRepair(mustRepair(t, enc)); err != nil {
			t.Fatal(err)
		}
	}
	st := dec.Stats()
	if st.Pending != 2 || st.Dropped != 3 {
		t.Fatalf("stats %+v", st)
	}
	// The first three repairs pivot on 0, 3 and 6; the limit drops 0, and
	// each later repair, pivoting on the orphaned 0 again, goes itself.
	for _, eq := range dec.rows {
		if eq.pivot() != 3 && eq.pivot() != 6 {
			t.Fatalf("kept an equation pivoted on %d, want 3 and 6", eq.pivot())
		}
	}
}

// With DT < 15 a repair may have zero coefficients on every lost symbol:
// it is useless, not an error, and costs no data work.
func TestDecoderZeroCoefficientRowIsUseless(t *testing.T) {
	const dt = 0
	// Find a key whose single coefficient is zero.
	cc := make([]byte, 1)
	key := uint16(0)
	for ; ; key++ {
		generateCoefficients(key, cc, dt)
		if cc[0] == 0 {
			break
		}
	}
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 4})
	pkt := append(RepairID{Key: key, DT: dt, NSS: 1, FirstESI: 7}.Append(nil), 0, 5, 1, 2, 3, 4, 5)
	recs, err := dec.AddRepair(pkt)
	if err != nil || recs != nil {
		t.Fatalf("got %v, %v", recs, err)
	}
	if st := dec.Stats(); st.Useless != 1 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// memoryLimit is a generous bound on a decoder's buffers: every slot,
// held or pooled equation and spare buffer at twice the largest symbol
// (growth doubles capacity), plus coefficient lists.
func memoryLimit(cfg DecoderConfig) int {
	buffers := ringSize(cfg.MaxWindow) + 2*cfg.MaxPending + 4
	symbol := 2*(cfg.MaxSymbolSize+symbolLenSize) + 64
	columns := (cfg.MaxPending + 2) * 2 * 5 * cfg.MaxWindow
	return buffers*symbol + columns
}

// Arbitrary bytes as repairs and sources, mixed with genuine traffic:
// pending equations and buffer memory stay within the configured bounds.
func TestDecoderMemoryBoundedUnderHostileInput(t *testing.T) {
	const seed = 9
	rng := rand.New(rand.NewPCG(seed, 9))
	cfg := DecoderConfig{MaxWindow: 64, MaxPending: 8, MaxSymbolSize: 200}
	dec := mustDecoder(t, cfg)
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 64, DT: 15, MaxSymbolSize: 200})
	limit := memoryLimit(dec.cfg)
	peak := 0
	for i := range 20000 {
		switch rng.IntN(4) {
		case 0: // random junk repair with a plausible window
			id := RepairID{Key: uint16(rng.Uint32()), DT: uint8(rng.IntN(16)), NSS: uint16(1 + rng.IntN(64)), FirstESI: enc.NextESI() - uint32(rng.IntN(80))}
			pkt := id.Append(nil)
			pkt = append(pkt, randomPayload(rng, 210)...)
			_, _ = dec.AddRepair(pkt)
		case 1: // random bytes
			_, _ = dec.AddRepair(randomPayload(rng, 220))
		default: // genuine traffic with 30% loss
			p := randomPayload(rng, 200)
			esi, _ := enc.AddSource(p)
			if rng.Float64() > 0.3 {
				dec.AddSource(esi, p)
			}
			if rng.IntN(3) == 0 {
				_, _ = dec.AddRepair(mustRepair(t, enc))
			}
		}
		st := dec.Stats()
		if st.Pending > cfg.MaxPending {
			t.Fatalf("seed %d step %d: %d pending", seed, i, st.Pending)
		}
		if st.MemoryBytes > limit {
			t.Fatalf("seed %d step %d: %d bytes held, limit %d", seed, i, st.MemoryBytes, limit)
		}
		peak = max(peak, st.MemoryBytes)
	}
	t.Logf("peak memory %d bytes (limit %d)", peak, limit)
}

// In steady state (fixed sizes, a loss pattern that repeats) the codec
// allocates nothing per packet.
func TestCodecSteadyStateAllocatesNothing(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 100, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 200})
	payload := make([]byte, 1200)
	buf := make([]byte, 0, 1300)
	step := 0
	round := func() {
		for range 16 {
			esi, _ := enc.AddSource(payload)
			step++
			if step%31 != 0 && step%47 != 0 {
				dec.AddSource(esi, payload)
			}
		}
		pkt, _ := enc.AppendRepair(buf[:0])
		if _, err := dec.AddRepair(pkt); err != nil {
			t.Fatal(err)
		}
	}
	for range 200 {
		round()
	}
	before := dec.Stats().Recovered
	if allocs := testing.AllocsPerRun(200, round); allocs != 0 {
		t.Fatalf("%v allocations per 16 sources + 1 repair, want 0", allocs)
	}
	if dec.Stats().Recovered == before {
		t.Fatal("the measured rounds recovered nothing")
	}
}

// After Reset a decoder behaves as new, on a different ESI range too.
func TestDecoderReset(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 10, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 10})
	ps := payloads(10)
	feed(t, enc, dec, ps, map[int]bool{1: true, 2: true})
	if _, err := dec.AddRepair(mustRepair(t, enc)); err != nil {
		t.Fatal(err)
	}
	dec.Reset()
	if st := dec.Stats(); st.Pending != 0 || st.Sources != 0 || st.Repairs != 0 || st.Missing != 0 {
		t.Fatalf("after Reset: %+v", st)
	}
	enc = mustEncoder(t, EncoderConfig{MaxWindow: 10, DT: 15, FirstESI: 1 << 31})
	feed(t, enc, dec, ps, map[int]bool{4: true})
	recs, err := dec.AddRepair(mustRepair(t, enc))
	expectRecovered(t, recs, err, map[uint32][]byte{1<<31 + 4: ps[4]})
}
