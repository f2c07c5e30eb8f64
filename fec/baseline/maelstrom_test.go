package baseline

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/satquic/satquic/fec"
)

func mustMaelstrom(t testing.TB, spec string) MaelstromConfig {
	t.Helper()
	cfg, err := ParseMaelstrom(spec)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestParseMaelstrom(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want MaelstromConfig
	}{
		{"1-20:20", MaelstromConfig{Interleaves: []int{1, 20}, Window: 20}},
		{"1-20-40:8", MaelstromConfig{Interleaves: []int{1, 20, 40}, Window: 8}},
		{"M:1-11-19:8", MaelstromConfig{Interleaves: []int{1, 11, 19}, Window: 8}},
		{"5:1", MaelstromConfig{Interleaves: []int{5}, Window: 1}},
	} {
		got, err := ParseMaelstrom(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		if !slices.Equal(got.Interleaves, tc.want.Interleaves) || got.Window != tc.want.Window {
			t.Errorf("%q parsed as %+v, want %+v", tc.spec, got, tc.want)
		}
		again, err := ParseMaelstrom(got.String())
		if err != nil || !slices.Equal(again.Interleaves, got.Interleaves) || again.Window != got.Window {
			t.Errorf("%q: String %q does not parse back (%v)", tc.spec, got.String(), err)
		}
	}
	for _, bad := range []string{"", "1-20", ":20", "1-20:", "1--20:20", "1-20:0", "0-20:20",
		"1-20:x", "a:20", "1-1:20", "1-20:-3", "1-70000:2", "1-257:256", "1-20:20:20"} {
		if cfg, err := ParseMaelstrom(bad); err == nil {
			t.Errorf("%q accepted as %+v", bad, cfg)
		}
	}
}

func TestMaelstromConfigString(t *testing.T) {
	cfg := MaelstromConfig{Interleaves: []int{1, 20, 40}, Window: 8}
	if s := cfg.String(); s != "1-20-40:8" {
		t.Fatalf("String() = %q", s)
	}
}

func TestMaelstromOverheadExact(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want float64
	}{{"1-20:20", 0.10}, {"1-20-40:8", 0.375}, {"1-11-19:8", 0.375}, {"3:4", 0.25}} {
		cfg := mustMaelstrom(t, tc.spec)
		if cfg.Overhead() != tc.want {
			t.Errorf("%s: Overhead() = %v, want %v", tc.spec, cfg.Overhead(), tc.want)
		}
		enc, err := NewMaelstromEncoder(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// A multiple of every layer's I*W: each bin has emitted all its
		// repairs.
		n := 10 * lcmSpan(cfg)
		repairs := 0
		for range n {
			repairs += len(enc.AddSource([]byte("x")))
		}
		if got := float64(repairs) / float64(n); got != tc.want {
			t.Errorf("%s: %d repairs for %d sources = %v, want %v", tc.spec, repairs, n, got, tc.want)
		}
	}
}

// lcmSpan is the least common multiple of the layers' I*W.
func lcmSpan(cfg MaelstromConfig) int {
	gcd := func(a, b int) int {
		for b != 0 {
			a, b = b, a%b
		}
		return a
	}
	l := 1
	for _, i := range cfg.Interleaves {
		l = l / gcd(l, i*cfg.Window) * i * cfg.Window
	}
	return l
}

func TestMaelstromRepairsCoverTheModelledSets(t *testing.T) {
	cfg := mustMaelstrom(t, "1-3-4:5")
	const n = 240
	enc, _ := NewMaelstromEncoder(cfg)
	rng := rand.New(rand.NewPCG(3, 3))
	sent := encodeStream(enc, randomPayloads(rng, n, 30))
	sets := maelstromSets(cfg, n)
	repairs := repairsOf(sent)
	if len(repairs) != len(sets) {
		t.Fatalf("%d repairs, model says %d", len(repairs), len(sets))
	}
	for r, packet := range repairs {
		h, _, err := parseXORRepair(packet)
		if err != nil {
			t.Fatal(err)
		}
		var covered []uint32
		for j := range int(h.Count) {
			covered = append(covered, h.esi(j))
		}
		if !slices.Equal(covered, sets[r]) {
			t.Fatalf("repair %d covers %v, want %v", r, covered, sets[r])
		}
	}
}

func TestMaelstromEveryLossPattern(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		sources int
	}{{"1-2:2", 7}, {"1-3:2", 6}, {"2:3", 12}} {
		t.Run(tc.spec, func(t *testing.T) {
			cfg := mustMaelstrom(t, tc.spec)
			rng := rand.New(rand.NewPCG(5, uint64(tc.sources)))
			enc, _ := NewMaelstromEncoder(cfg)
			sent := encodeStream(enc, randomPayloads(rng, tc.sources, 24))
			sets := maelstromSets(cfg, tc.sources)
			if len(sent) > 16 {
				t.Fatalf("%d packets: too many patterns", len(sent))
			}
			for pattern := range uint64(1) << len(sent) {
				lost := lossMask(pattern, len(sent))
				dec, _ := NewMaelstromDecoder(cfg)
				got := deliver(t, dec, sent, lost, nil)
				sameSet(t, got.recovered, peelOracle(sent, lost, sets), fmt.Sprintf("pattern %b", pattern))
			}
		})
	}
}

func TestMaelstromBurstOf20(t *testing.T) {
	cfg := mustMaelstrom(t, "1-20:20")
	const n = 1600
	rng := rand.New(rand.NewPCG(20, 20))
	enc, _ := NewMaelstromEncoder(cfg)
	sent := encodeStream(enc, randomPayloads(rng, n, 200))
	xorEnc, _ := NewXOREncoder(20)
	xorSent := encodeStream(xorEnc, randomPayloads(rng, n, 200))
	// Bursts across one 400-ESI cycle of the interleave-20 layer, away
	// from the unprotected tail; a step prime to 20 meets every phase of
	// the bins.
	for start := uint32(400); start < 800; start += 9 {
		if got := burstRecovered(t, sent, start, 20, func() fec.SchemeDecoder {
			d, _ := NewMaelstromDecoder(cfg)
			return d
		}); got != 20 {
			t.Fatalf("burst at %d: %d of 20 recovered", start, got)
		}
		// The interleave-1 layer alone (XOR every 20) rebuilds at most
		// the one loss of a block the burst barely touches.
		if got := burstRecovered(t, xorSent, start, 20, func() fec.SchemeDecoder {
			d, _ := NewXORDecoder(20)
			return d
		}); got > 1 {
			t.Fatalf("xor parity recovered %d of a 20-burst at %d", got, start)
		}
	}
}

// burstRecovered loses sources start..start+length-1 and returns how many
// of them the decoder rebuilds.
func burstRecovered(t *testing.T, sent []sentPacket, start uint32, length int, newDecoder func() fec.SchemeDecoder) int {
	t.Helper()
	lost := make([]bool, len(sent))
	for i, p := range sent {
		lost[i] = !p.repair && p.esi-start < uint32(length)
	}
	return len(deliver(t, newDecoder(), sent, lost, nil).recovered)
}

func TestMaelstromRandomLoss(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, spec := range []string{"1-20:20", "1-20-40:8", "1-11-19:8"} {
		for _, p := range []float64{0.01, 0.05, 0.2} {
			cfg := mustMaelstrom(t, spec)
			const n = 4000
			enc, _ := NewMaelstromEncoder(cfg)
			sent := encodeStream(enc, randomPayloads(rng, n, 1400))
			lost := uniformLoss(rng, len(sent), p)
			dec, _ := NewMaelstromDecoder(cfg)
			got := deliver(t, dec, sent, lost, jitterOrder(rng, len(sent), 6))
			want := peelOracle(sent, lost, maelstromSets(cfg, n))
			sameSet(t, got.recovered, want, fmt.Sprintf("seed %d %s loss %v", seed, spec, p))
		}
	}
}

func TestMaelstromMalformedRepairs(t *testing.T) {
	cfg := mustMaelstrom(t, "1-4:4")
	enc, _ := NewMaelstromEncoder(cfg)
	rng := rand.New(rand.NewPCG(9, 9))
	sent := encodeStream(enc, randomPayloads(rng, 64, 50))
	repair := repairsOf(sent)[0]
	dec, _ := NewMaelstromDecoder(cfg)
	for n := range len(repair) {
		if _, err := dec.AddRepair(repair[:n]); !errors.Is(err, ErrMalformedRepair) {
			t.Fatalf("prefix of %d bytes: err %v", n, err)
		}
	}
	if _, err := dec.AddRepair(append(slices.Clone(repair), 0)); !errors.Is(err, ErrMalformedRepair) {
		t.Fatalf("repair with a trailing byte: err %v", err)
	}
	mutate := func(f func(b []byte)) []byte {
		b := slices.Clone(repair)
		f(b)
		return b
	}
	for name, b := range map[string][]byte{
		"tag":      mutate(func(b []byte) { b[0] = rsRepairTag }),
		"stride 0": mutate(func(b []byte) { b[5], b[6] = 0, 0 }),
		"count 0":  mutate(func(b []byte) { b[7], b[8] = 0, 0 }),
		"max len":  mutate(func(b []byte) { b[9], b[10] = 0xFF, 0xFF }),
	} {
		if _, err := dec.AddRepair(b); !errors.Is(err, ErrMalformedRepair) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	// Well formed, but spanning more than any layer of this decoder.
	wide := mutate(func(b []byte) { b[5], b[6] = 0, 6 })
	if _, err := dec.AddRepair(wide); !errors.Is(err, ErrInconsistentRepair) {
		t.Errorf("too wide: err %v", err)
	}
}

func TestMaelstromRandomBytesNeverPanic(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	cfg := mustMaelstrom(t, "1-4:4")
	dec, _ := NewMaelstromDecoder(cfg)
	for i := range 200 {
		dec.AddSource(uint32(i), randomPayloads(rng, 1, 30)[0])
	}
	for range 20000 {
		b := randomPayloads(rng, 1, 40)[0]
		if rng.IntN(2) == 0 && len(b) > 0 {
			b[0] = xorRepairTag
		}
		h, body, err := parseXORRepair(b)
		if err == nil {
			again := make([]byte, xorRepairHeaderLen)
			h.put(again)
			if string(append(again, body...)) != string(b) {
				t.Fatalf("seed %d: %x parses but does not serialize back", seed, b)
			}
		}
		dec.AddRepair(b)
	}
}

// TestMaelstromInconsistentRepairLeavesStateUnchanged: a repair whose
// rebuilt symbol has a bad length or padding is refused and rebuilds
// nothing, and the genuine repair still works afterwards.
func TestMaelstromInconsistentRepairLeavesStateUnchanged(t *testing.T) {
	cfg := mustMaelstrom(t, "1:4")
	enc, _ := NewMaelstromEncoder(cfg)
	payloads := [][]byte{[]byte("aa"), []byte("bbbb"), []byte("cccccc"), []byte("d")}
	sent := encodeStream(enc, payloads)
	repair := repairsOf(sent)[0]
	dec, _ := NewMaelstromDecoder(cfg)
	for esi, p := range payloads[:3] {
		dec.AddSource(uint32(esi), p)
	}
	badPadding := slices.Clone(repair)
	badPadding[len(badPadding)-1] ^= 1 // the lost "d" is shorter than the symbol
	badLength := slices.Clone(repair)
	badLength[xorRepairHeaderLen] ^= 0x40
	for name, b := range map[string][]byte{"padding": badPadding, "length": badLength} {
		recs, err := dec.AddRepair(b)
		if !errors.Is(err, ErrInconsistentRepair) || recs != nil {
			t.Fatalf("%s: %d recovered, err %v", name, len(recs), err)
		}
	}
	recs, err := dec.AddRepair(repair)
	if err != nil || len(recs) != 1 || string(recs[0].Data) != "d" || recs[0].ESI != 3 {
		t.Fatalf("genuine repair after bad ones: %+v, %v", recs, err)
	}
	// A source longer than the repair's symbol contradicts it.
	dec2, _ := NewMaelstromDecoder(cfg)
	dec2.AddSource(0, []byte("this source is longer than any of the block"))
	if _, err := dec2.AddRepair(repair); !errors.Is(err, ErrInconsistentRepair) {
		t.Fatalf("oversized known source: err %v", err)
	}
}

func TestMaelstromMemoryBounded(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	cfg := mustMaelstrom(t, "1-20-40:8")
	enc, _ := NewMaelstromEncoder(cfg)
	dec := newPeelingDecoder(cfg)
	payload := make([]byte, 100)
	peakPending := 0
	for i := range 60000 {
		repairs := enc.AddSource(payload)
		// Heavy loss leaves many repairs waiting.
		if rng.Float64() > 0.4 {
			dec.AddSource(uint32(i), payload)
		}
		for _, r := range repairs {
			if _, err := dec.AddRepair(r); err != nil {
				t.Fatal(err)
			}
		}
		peakPending = max(peakPending, len(dec.pending))
		if len(dec.pending)+len(dec.free) > dec.maxPending+1 {
			t.Fatalf("seed %d: %d pending + %d free repairs, bound %d", seed, len(dec.pending), len(dec.free), dec.maxPending)
		}
		for _, p := range dec.pending {
			if dec.window.age(p.h.First) >= int64(dec.window.size()) {
				t.Fatalf("seed %d: pending repair at %d outlived the window (newest %d)", seed, p.h.First, dec.window.newest)
			}
		}
	}
	if dec.window.size() > 1024 {
		t.Errorf("window of %d ESIs for a span of %d", dec.window.size(), cfg.maxSpan())
	}
	t.Logf("peak pending repairs %d of %d allowed", peakPending, dec.maxPending)
}

// TestMaelstromAcrossESIWrap starts the encoder just below 2^32: repairs
// straddling the wrap cover evenly spaced ESIs and still decode.
func TestMaelstromAcrossESIWrap(t *testing.T) {
	cfg := mustMaelstrom(t, "1-3:4")
	rng := rand.New(rand.NewPCG(11, 11))
	enc := newLayeredXOREncoder(cfg)
	const before = 30
	enc.sources = 1<<32 - before
	payloads := randomPayloads(rng, 120, 60)
	var sent []sentPacket
	for i, p := range payloads {
		sent = append(sent, sentPacket{esi: uint32(1<<32-before) + uint32(i), data: p})
		for _, r := range enc.AddSource(p) {
			sent = append(sent, sentPacket{repair: true, data: slices.Clone(r)})
		}
	}
	// Two adjacent losses: the interleave-1 layer misses both, the
	// interleave-3 layer has them in different bins and rebuilds both.
	index := map[uint32]int{}
	for i, p := range sent {
		if !p.repair {
			index[p.esi] = i
		}
	}
	for k := range 96 {
		esi := uint32(1<<32-before) + uint32(k)
		lost := make([]bool, len(sent))
		lost[index[esi]], lost[index[esi+1]] = true, true
		dec, _ := NewMaelstromDecoder(cfg)
		got := deliver(t, dec, sent, lost, nil)
		if !got.recovered[esi] || !got.recovered[esi+1] {
			t.Fatalf("ESIs %d and %d (near the wrap): recovered %v", esi, esi+1, got.recovered)
		}
	}
}

func TestMaelstromUnprotectedOversizedSource(t *testing.T) {
	cfg := mustMaelstrom(t, "1:3")
	enc, _ := NewMaelstromEncoder(cfg)
	huge := make([]byte, maxProtectedPayload+1)
	payloads := [][]byte{[]byte("one"), huge, []byte("three")}
	sent := encodeStream(enc, payloads)
	for lostESI := range uint32(3) {
		lost := make([]bool, len(sent))
		lost[lostESI] = true
		dec, _ := NewMaelstromDecoder(cfg)
		got := deliver(t, dec, sent, lost, nil)
		if want := lostESI != 1; got.recovered[lostESI] != want {
			t.Fatalf("lost ESI %d: recovered %v, want %v", lostESI, got.recovered[lostESI], want)
		}
	}
}

func TestMaelstromBadConfig(t *testing.T) {
	for _, cfg := range []MaelstromConfig{{}, {Interleaves: []int{1}}, {Interleaves: []int{0}, Window: 4},
		{Interleaves: []int{2, 2}, Window: 4}, {Interleaves: []int{1 << 10}, Window: 1 << 10}} {
		if _, err := NewMaelstromEncoder(cfg); err == nil {
			t.Errorf("encoder accepted %+v", cfg)
		}
		if _, err := NewMaelstromDecoder(cfg); err == nil {
			t.Errorf("decoder accepted %+v", cfg)
		}
	}
}
