package fec

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// randomTrial draws a trial's parameters from its seed.
func randomTrial(seed uint64, loss codecLossModel) codecTrial {
	rng := rand.New(rand.NewPCG(seed, 77))
	dts := []uint8{15, 15, 15, 10, 4}
	tr := codecTrial{
		seed:       seed,
		sources:    100 + rng.IntN(400),
		encWindow:  1 + rng.IntN(120),
		varyWindow: rng.IntN(2) == 0,
		maxSize:    1 + rng.IntN(300),
		dt:         dts[rng.IntN(len(dts))],
		repairRate: 0.05 + 0.3*rng.Float64(),
		loss:       loss,
		firstESI:   rng.Uint32(),
		decoder:    DecoderConfig{MaxWindow: MaxNSS},
		complete:   true,
	}
	tr.decoder.MaxSymbolSize = tr.maxSize
	return tr
}

func TestDecoderRoundTripUniformLoss(t *testing.T) {
	recovered, lost := 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		p := []float64{0.01, 0.05, 0.1, 0.2}[seed%4]
		res := randomTrial(seed, &codecUniformLoss{p: p}).run(t)
		recovered += res.recovered
		lost += res.lost
	}
	// The harness checks exactness and completeness; this guards against
	// a harness that silently recovers nothing.
	if lost == 0 || recovered < lost/2 {
		t.Fatalf("recovered %d of %d lost symbols", recovered, lost)
	}
}

func TestDecoderRoundTripBurstyLoss(t *testing.T) {
	recovered, lost := 0, 0
	for seed := uint64(100); seed < 160; seed++ {
		res := randomTrial(seed, &codecBurstLoss{p: 0.02, r: 0.25}).run(t)
		recovered += res.recovered
		lost += res.lost
	}
	if lost == 0 || recovered < lost/3 {
		t.Fatalf("recovered %d of %d lost symbols", recovered, lost)
	}
}

// Packets arriving out of order: sources show up after repairs that
// covered them (and were counted as unknowns), repairs show up before
// the sources of their window.
func TestDecoderRoundTripReordered(t *testing.T) {
	substituted := 0
	for seed := uint64(200); seed < 240; seed++ {
		tr := randomTrial(seed, &codecUniformLoss{p: 0.08})
		tr.reorder = 1 + int(seed%12)
		res := tr.run(t)
		substituted += int(res.stats.Recovered)
	}
	if substituted == 0 {
		t.Fatal("nothing recovered with reordering")
	}
}

// The ESI space wraps from 2^32-1 to 0 in the middle of the run, so
// windows and held equations straddle it.
func TestDecoderWrapAround(t *testing.T) {
	for seed := uint64(300); seed < 320; seed++ {
		tr := randomTrial(seed, &codecUniformLoss{p: 0.1})
		tr.firstESI = -uint32(tr.sources / 2)
		tr.encWindow = 20 + int(seed%60)
		tr.repairRate = 0.3
		res := tr.run(t)
		if res.lost > 0 && res.recovered == 0 {
			t.Fatalf("%v: nothing recovered across the wrap", tr)
		}
	}
	// And a decoder window smaller than the run, so symbols leave memory
	// across the wrap too.
	for seed := uint64(320); seed < 340; seed++ {
		tr := randomTrial(seed, &codecUniformLoss{p: 0.1})
		tr.firstESI = -uint32(tr.sources / 3)
		tr.decoder.MaxWindow = tr.encWindow + int(seed%40)
		tr.complete = false
		tr.run(t)
	}
}

// A decoder window smaller than the run: symbols and equations leave
// memory; recovered bytes must still be exact and pending equations
// bounded.
func TestDecoderSmallWindowAndPendingLimit(t *testing.T) {
	for seed := uint64(400); seed < 440; seed++ {
		tr := randomTrial(seed, &codecBurstLoss{p: 0.05, r: 0.2})
		tr.decoder.MaxWindow = tr.encWindow + int(seed%30)
		tr.decoder.MaxPending = 1 + int(seed%6)
		tr.complete = false
		tr.run(t)
	}
}

func mustEncoder(t testing.TB, cfg EncoderConfig) *Encoder {
	t.Helper()
	enc, err := NewEncoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func mustDecoder(t testing.TB, cfg DecoderConfig) *Decoder {
	t.Helper()
	dec, err := NewDecoder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dec
}

func mustRepair(t testing.TB, enc *Encoder) []byte {
	t.Helper()
	pkt, err := enc.AppendRepair(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkt
}

// payloads returns n distinct payloads of varied lengths (one empty).
func payloads(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = bytes.Repeat([]byte{byte(i + 1)}, (i*37)%50)
	}
	return out
}

// feed sends the sources of ps to enc, and to dec except those in lost.
func feed(t testing.TB, enc *Encoder, dec *Decoder, ps [][]byte, lost map[int]bool) {
	t.Helper()
	for i, p := range ps {
		esi, err := enc.AddSource(p)
		if err != nil {
			t.Fatal(err)
		}
		if !lost[i] {
			if recs := dec.AddSource(esi, p); len(recs) != 0 {
				t.Fatalf("source %d recovered %d symbols without any repair", i, len(recs))
			}
		}
	}
}

func expectRecovered(t testing.TB, recs []Recovered, err error, want map[uint32][]byte) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(want) {
		t.Fatalf("recovered %d symbols, want %d", len(recs), len(want))
	}
	for _, r := range recs {
		if w, ok := want[r.ESI]; !ok || !bytes.Equal(r.Data, w) {
			t.Fatalf("ESI %d recovered as %q, want %q", r.ESI, r.Data, w)
		}
	}
}

func TestDecoderSingleLoss(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 10, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 10})
	ps := payloads(10)
	feed(t, enc, dec, ps, map[int]bool{4: true})
	recs, err := dec.AddRepair(mustRepair(t, enc))
	expectRecovered(t, recs, err, map[uint32][]byte{4: ps[4]})
	st := dec.Stats()
	if st.Recovered != 1 || st.Pending != 0 || st.Repairs != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// An empty payload is a 2-byte coded symbol and must come back empty, not
// nil-versus-padding confused.
func TestDecoderRecoversEmptyAndLongestPayloads(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 3, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 3})
	ps := [][]byte{{}, bytes.Repeat([]byte{0xEE}, 300), {0, 0, 0}}
	feed(t, enc, dec, ps, map[int]bool{0: true, 1: true})
	recs, err := dec.AddRepair(mustRepair(t, enc))
	expectRecovered(t, recs, err, nil)
	recs, err = dec.AddRepair(mustRepair(t, enc))
	expectRecovered(t, recs, err, map[uint32][]byte{0: ps[0], 1: ps[1]})
}

// A source that arrives while it is an unknown of a held equation is
// substituted into it, which here solves the other unknown at once.
func TestDecoderLateSourceSubstituted(t *testing.T) {
	for _, late := range []int{2, 6} { // the pivot (oldest) or the other unknown
		enc := mustEncoder(t, EncoderConfig{MaxWindow: 10, DT: 15})
		dec := mustDecoder(t, DecoderConfig{MaxWindow: 10})
		ps := payloads(8)
		feed(t, enc, dec, ps, map[int]bool{2: true, 6: true})
		recs, err := dec.AddRepair(mustRepair(t, enc))
		expectRecovered(t, recs, err, nil)
		if st := dec.Stats(); st.Pending != 1 {
			t.Fatalf("pending %d, want 1", st.Pending)
		}
		other := 8 - late
		recs = dec.AddSource(uint32(late), ps[late])
		expectRecovered(t, recs, nil, map[uint32][]byte{uint32(other): ps[other]})
		if st := dec.Stats(); st.Pending != 0 {
			t.Fatalf("pending %d after substitution, want 0", st.Pending)
		}
	}
}

func TestDecoderSourceAfterRecoveryIgnored(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 5, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 5})
	ps := payloads(5)
	feed(t, enc, dec, ps, map[int]bool{1: true})
	recs, err := dec.AddRepair(mustRepair(t, enc))
	expectRecovered(t, recs, err, map[uint32][]byte{1: ps[1]})
	if recs := dec.AddSource(1, ps[1]); recs != nil {
		t.Fatalf("late copy of a recovered source returned %v", recs)
	}
	if recs := dec.AddSource(3, ps[3]); recs != nil {
		t.Fatalf("duplicate source returned %v", recs)
	}
	if st := dec.Stats(); st.Duplicates != 2 {
		t.Fatalf("duplicates %d, want 2", st.Duplicates)
	}
}

// A repair over a window that lost nothing is dropped without any work:
// even a corrupted coded symbol, or a wrong symbol size, goes unnoticed
// there, which is why integrity belongs to the transport.
func TestDecoderNoLossRepairIsUseless(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 6, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 6})
	feed(t, enc, dec, payloads(6), nil)
	pkt := mustRepair(t, enc)
	for _, bad := range [][]byte{flipLast(pkt), pkt[:len(pkt)-1], append(bytes.Clone(pkt), 0)} {
		recs, err := dec.AddRepair(bad)
		if err != nil || recs != nil {
			t.Fatalf("got %v, %v; want nothing", recs, err)
		}
	}
	if st := dec.Stats(); st.Useless != 3 || st.Rejected != 0 || st.Missing != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func flipLast(pkt []byte) []byte {
	bad := bytes.Clone(pkt)
	bad[len(bad)-1] ^= 0x55
	return bad
}

// Sources older than the first packet the decoder saw are unknown until
// they arrive; once all have, a repair over them is examined, and its
// symbol size must be exactly the longest of its window.
func TestDecoderSourcesBeforeFirstPacket(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 10, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 10})
	ps := payloads(10)
	var esis []uint32
	for _, p := range ps {
		esi, _ := enc.AddSource(p)
		esis = append(esis, esi)
	}
	pkt := mustRepair(t, enc)
	dec.AddSource(esis[5], ps[5])
	for i := range 9 {
		if i != 5 {
			dec.AddSource(esis[i], ps[i])
		}
	}
	recs, err := dec.AddRepair(pkt)
	expectRecovered(t, recs, err, map[uint32][]byte{9: ps[9]})
	for _, bad := range [][]byte{pkt[:len(pkt)-1], append(bytes.Clone(pkt), 0)} {
		if _, err := dec.AddRepair(bad); !errors.Is(err, ErrInconsistent) {
			t.Fatalf("wrong symbol size: got %v, want ErrInconsistent", err)
		}
	}
	if recs, err := dec.AddRepair(pkt); err != nil || recs != nil {
		t.Fatalf("intact repair over known sources: %v, %v", recs, err)
	}
}

func TestDecoderRejectsMalformedRepairs(t *testing.T) {
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 16, MaxSymbolSize: 100})
	id := RepairID{Key: 1, DT: 15, NSS: 4, FirstESI: 0}
	cases := []struct {
		name string
		pkt  []byte
		want error
	}{
		{"empty", nil, ErrShortRepairID},
		{"short ID", id.Append(nil)[:5], ErrShortRepairID},
		{"NSS 0", []byte{0, 1, 0xF0, 0, 0, 0, 0, 0, 0, 0}, ErrBadNSS},
		{"no symbol", id.Append(nil), ErrSymbolSize},
		{"E = 1", append(id.Append(nil), 0), ErrSymbolSize},
		{"E above MaxSymbolSize+2", append(id.Append(nil), make([]byte, 103)...), ErrSymbolSize},
		{"NSS above MaxWindow", append(RepairID{NSS: 17, DT: 15}.Append(nil), 0, 0), ErrWindowTooLarge},
	}
	for _, c := range cases {
		if _, err := dec.AddRepair(c.pkt); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	if st := dec.Stats(); st.Rejected != uint64(len(cases)) || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
	// E = MaxSymbolSize+2 exactly is accepted.
	if _, err := dec.AddRepair(append(id.Append(nil), make([]byte, 102)...)); err != nil {
		t.Fatalf("E = MaxSymbolSize+2: %v", err)
	}
}

// A known source longer than the repair's E contradicts it.
func TestDecoderRejectsRepairShorterThanKnownSource(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 4, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 4})
	ps := [][]byte{make([]byte, 40), make([]byte, 10), make([]byte, 10)}
	feed(t, enc, dec, ps, map[int]bool{2: true})
	pkt := mustRepair(t, enc)
	if _, err := dec.AddRepair(pkt[:RepairIDLen+30]); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("got %v, want ErrInconsistent", err)
	}
	recs, err := dec.AddRepair(pkt)
	expectRecovered(t, recs, err, map[uint32][]byte{2: ps[2]})
}

// A repair whose coefficients are implied by the held equations but
// whose data disagrees is rejected, and leaves the decoder unchanged.
func TestDecoderRejectsRedundantCorruptRepair(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 10, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 10})
	ps := payloads(10)
	feed(t, enc, dec, ps, map[int]bool{3: true, 7: true})
	first := mustRepair(t, enc)
	recs, err := dec.AddRepair(first)
	expectRecovered(t, recs, err, nil)
	before := dec.Stats()

	dup := bytes.Clone(first)
	dup[RepairIDLen+5] ^= 0x80
	if _, err := dec.AddRepair(dup); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("corrupt duplicate: got %v, want ErrInconsistent", err)
	}
	// An intact duplicate is merely useless.
	if recs, err := dec.AddRepair(first); err != nil || recs != nil {
		t.Fatalf("intact duplicate: %v, %v", recs, err)
	}
	after := dec.Stats()
	if after.Pending != before.Pending || after.Terms != before.Terms || after.Rejected != 1 || after.Useless != 1 {
		t.Fatalf("before %+v, after %+v", before, after)
	}
	recs, err = dec.AddRepair(mustRepair(t, enc))
	expectRecovered(t, recs, err, map[uint32][]byte{3: ps[3], 7: ps[7]})
}

// A repair whose only effect would be to rebuild an impossible symbol
// (length prefix past E, or non-zero padding) is rejected without
// changing the decoder.
func TestDecoderRejectsImpossibleRebuiltSymbol(t *testing.T) {
	enc := mustEncoder(t, EncoderConfig{MaxWindow: 4, DT: 15})
	dec := mustDecoder(t, DecoderConfig{MaxWindow: 4})
	ps := [][]byte{[]byte("abc"), []byte("defgh"), []byte("ij")}
	feed(t, enc, dec, ps, map[int]bool{2: true})
	pkt := mustRepair(t, enc) // E = 7; the lost symbol has 4 coded bytes
	for _, flip := range []int{0, 1, 5, 6} {
		bad := bytes.Clone(pkt)
		bad[RepairIDLen+flip] ^= 0x01
		if _, err := dec.AddRepair(bad); !errors.Is(err, ErrInconsistent) {
			t.Fatalf("byte %d flipped: got %v, want ErrInconsistent", flip, err)
		}
	}
	recs, err := dec.AddRepair(pkt)
	expectRecovered(t, recs, err, map[uint32][]byte{2: ps[2]})
}

// Truncating a repair never yields wrong bytes: every prefix is rejected
// (here the window's longest symbol is the lost one or a known one).
func TestDecoderTruncatedRepairs(t *testing.T) {
	for _, lostIdx := range []int{0, 1} {
		enc := mustEncoder(t, EncoderConfig{MaxWindow: 4, DT: 15})
		ps := [][]byte{bytes.Repeat([]byte{9}, 30), []byte("0123456789"), []byte("xy")}
		var pkt []byte
		var esis []uint32
		for _, p := range ps {
			esi, _ := enc.AddSource(p)
			esis = append(esis, esi)
		}
		pkt = mustRepair(t, enc)
		for n := range len(pkt) {
			dec := mustDecoder(t, DecoderConfig{MaxWindow: 4})
			for i, p := range ps {
				if i != lostIdx {
					dec.AddSource(esis[i], p)
				}
			}
			recs, err := dec.AddRepair(pkt[:n])
			if err == nil || len(recs) != 0 {
				t.Fatalf("lost %d, %d-byte prefix of %d: got %v, %v; want an error", lostIdx, n, len(pkt), recs, err)
			}
		}
	}
}

// Corrupt copies of repairs, delivered after the genuine ones (so that
// redundancy exists), never yield a symbol; when they meet a held
// equation they are rejected.
func TestDecoderCorruptDuplicatesNeverRecover(t *testing.T) {
	rejected := uint64(0)
	for seed := uint64(500); seed < 530; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		enc := mustEncoder(t, EncoderConfig{MaxWindow: 30, DT: 15})
		dec := mustDecoder(t, DecoderConfig{MaxWindow: 60})
		originals := make(map[uint32][]byte)
		for i := range 300 {
			p := randomPayload(rng, 60)
			esi, _ := enc.AddSource(p)
			originals[esi] = p
			if rng.Float64() >= 0.15 {
				checkRecovered(t, seed, originals, dec.AddSource(esi, p), nil)
			}
			if i%4 != 3 {
				continue
			}
			pkt := mustRepair(t, enc)
			if rng.IntN(4) == 0 {
				continue // lost repair
			}
			recs, err := dec.AddRepair(pkt)
			checkRecovered(t, seed, originals, recs, err)
			bad := bytes.Clone(pkt)
			bad[RepairIDLen+rng.IntN(len(pkt)-RepairIDLen)] ^= byte(1 + rng.IntN(255))
			before := dec.Stats()
			recs, err = dec.AddRepair(bad)
			if len(recs) != 0 {
				t.Fatalf("seed %d: corrupt duplicate recovered %d symbols", seed, len(recs))
			}
			after := dec.Stats()
			if after.Pending != before.Pending || after.Terms != before.Terms {
				t.Fatalf("seed %d: corrupt duplicate (error %v) changed the held equations", seed, err)
			}
			if before.Pending > 0 && err == nil && after.Useless == before.Useless {
				t.Fatalf("seed %d: corrupt duplicate neither rejected nor useless", seed)
			}
		}
		rejected += dec.Stats().Rejected
	}
	if rejected == 0 {
		t.Fatal("no corrupt duplicate was ever detected")
	}
}

func checkRecovered(t *testing.T, seed uint64, originals map[uint32][]byte, recs []Recovered, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("seed %d: genuine packet rejected: %v", seed, err)
	}
	for _, r := range recs {
		if !bytes.Equal(r.Data, originals[r.ESI]) {
			t.Fatalf("seed %d: ESI %d recovered wrong", seed, r.ESI)
		}
	}
}
