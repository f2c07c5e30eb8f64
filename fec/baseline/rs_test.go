package baseline

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRSEveryLossPattern(t *testing.T) {
	for _, tc := range []struct{ data, parity, blocks int }{{1, 1, 5}, {2, 1, 4}, {3, 2, 2}, {4, 3, 2}, {2, 4, 2}} {
		t.Run(fmt.Sprintf("%d+%d", tc.data, tc.parity), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.data), uint64(tc.parity)))
			enc, err := NewRSEncoder(tc.data, tc.parity)
			if err != nil {
				t.Fatal(err)
			}
			sent := encodeStream(enc, randomPayloads(rng, tc.data*tc.blocks, 40))
			if len(sent) != (tc.data+tc.parity)*tc.blocks {
				t.Fatalf("%d packets sent, want %d", len(sent), (tc.data+tc.parity)*tc.blocks)
			}
			for pattern := range uint64(1) << len(sent) {
				lost := lossMask(pattern, len(sent))
				dec, err := NewRSDecoder(tc.data, tc.parity)
				if err != nil {
					t.Fatal(err)
				}
				got := deliver(t, dec, sent, lost, nil)
				sameSet(t, got.recovered, rsOracle(sent, lost, tc.data, tc.parity), fmt.Sprintf("pattern %b", pattern))
			}
		})
	}
}

func TestRSOverheadExact(t *testing.T) {
	for _, tc := range []struct{ data, parity int }{{10, 1}, {10, 3}, {20, 10}, {200, 56}} {
		enc, err := NewRSEncoder(tc.data, tc.parity)
		if err != nil {
			t.Fatal(err)
		}
		n := 5 * tc.data
		repairs := 0
		for range n {
			repairs += len(enc.AddSource([]byte("payload")))
		}
		if repairs*tc.data != n*tc.parity {
			t.Errorf("%d+%d: %d repairs for %d sources", tc.data, tc.parity, repairs, n)
		}
	}
}

func TestRSRandomLossAndReordering(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 4))
	for _, tc := range []struct{ data, parity int }{{10, 2}, {20, 5}, {4, 4}} {
		for _, p := range []float64{0.02, 0.1, 0.3} {
			enc, _ := NewRSEncoder(tc.data, tc.parity)
			sent := encodeStream(enc, randomPayloads(rng, 2000, 1400))
			lost := uniformLoss(rng, len(sent), p)
			dec, _ := NewRSDecoder(tc.data, tc.parity)
			got := deliver(t, dec, sent, lost, jitterOrder(rng, len(sent), 6))
			sameSet(t, got.recovered, rsOracle(sent, lost, tc.data, tc.parity),
				fmt.Sprintf("seed %d rs %d+%d loss %v", seed, tc.data, tc.parity, p))
		}
	}
}

func TestRSMalformedRepairs(t *testing.T) {
	enc, _ := NewRSEncoder(3, 2)
	rng := rand.New(rand.NewPCG(12, 12))
	sent := encodeStream(enc, randomPayloads(rng, 3, 50))
	repair := repairsOf(sent)[1]
	dec, _ := NewRSDecoder(3, 2)
	for n := range len(repair) {
		if _, err := dec.AddRepair(repair[:n]); !errors.Is(err, ErrMalformedRepair) {
			t.Fatalf("prefix of %d bytes: err %v", n, err)
		}
	}
	mutate := func(f func(b []byte)) []byte {
		b := slices.Clone(repair)
		f(b)
		return b
	}
	for name, b := range map[string][]byte{
		"tag":           mutate(func(b []byte) { b[0] = xorRepairTag }),
		"data 0":        mutate(func(b []byte) { b[5] = 0 }),
		"parity 0":      mutate(func(b []byte) { b[6], b[7] = 0, 0 }),
		"index":         mutate(func(b []byte) { b[7] = 2 }),
		"too many":      mutate(func(b []byte) { b[5], b[6] = 200, 100 }),
		"max len":       mutate(func(b []byte) { b[8], b[9] = 0xFF, 0xFF }),
		"trailing byte": append(slices.Clone(repair), 0),
	} {
		if _, err := dec.AddRepair(b); !errors.Is(err, ErrMalformedRepair) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	other := mutate(func(b []byte) { b[5] = 4 })
	if _, err := dec.AddRepair(other); !errors.Is(err, ErrInconsistentRepair) {
		t.Errorf("repair of another code: err %v", err)
	}
}

func TestRSRandomBytesNeverPanic(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 5))
	dec, _ := NewRSDecoder(3, 2)
	for i := range 100 {
		dec.AddSource(uint32(i), randomPayloads(rng, 1, 30)[0])
	}
	for range 20000 {
		b := randomPayloads(rng, 1, 40)[0]
		if rng.IntN(2) == 0 && len(b) > 7 {
			b[0], b[5], b[6], b[7] = rsRepairTag, 3, 2, byte(rng.IntN(2))
		}
		h, shard, err := parseRSRepair(b)
		if err == nil {
			again := make([]byte, rsRepairHeaderLen)
			h.put(again)
			if string(append(again, shard...)) != string(b) {
				t.Fatalf("seed %d: %x parses but does not serialize back", seed, b)
			}
		}
		dec.AddRepair(b)
	}
}

// TestRSInconsistentRepairIsRefused: a parity shard that rebuilds a source
// with bad padding yields nothing and leaves the block waiting for a good
// one.
func TestRSInconsistentRepairIsRefused(t *testing.T) {
	enc, _ := NewRSEncoder(3, 2)
	payloads := [][]byte{[]byte("a"), []byte("bbbbbbbb"), []byte("ccc")}
	sent := encodeStream(enc, payloads)
	repairs := repairsOf(sent)
	dec, _ := NewRSDecoder(3, 2)
	dec.AddSource(1, payloads[1])
	if recs, err := dec.AddRepair(repairs[0]); err != nil || recs != nil {
		t.Fatalf("first repair: %v, %v", recs, err)
	}
	bad := slices.Clone(repairs[1])
	bad[len(bad)-1] ^= 0x5A
	if recs, err := dec.AddRepair(bad); !errors.Is(err, ErrInconsistentRepair) || recs != nil {
		t.Fatalf("corrupt repair: %d recovered, err %v", len(recs), err)
	}
	recs, err := dec.AddRepair(repairs[1])
	if err != nil || len(recs) != 2 {
		t.Fatalf("genuine repair after a corrupt one: %+v, %v", recs, err)
	}
	for _, r := range recs {
		if string(r.Data) != string(payloads[r.ESI]) {
			t.Fatalf("ESI %d recovered as %q", r.ESI, r.Data)
		}
	}
}

func TestRSMemoryBounded(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 6))
	enc, _ := NewRSEncoder(10, 2)
	d, _ := NewRSDecoder(10, 2)
	dec := d.(*rsDecoder)
	payload := make([]byte, 200)
	for i := range 50000 {
		repairs := enc.AddSource(payload)
		if rng.Float64() > 0.5 {
			dec.AddSource(uint32(i), payload)
		}
		for _, r := range repairs {
			if rng.Float64() > 0.5 {
				if _, err := dec.AddRepair(r); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(dec.blocks)+len(dec.free) > dec.maxBlocks+1 {
			t.Fatalf("seed %d: %d waiting + %d free blocks, bound %d", seed, len(dec.blocks), len(dec.free), dec.maxBlocks)
		}
		for _, b := range dec.blocks {
			if dec.window.forgotten(b.first) {
				t.Fatalf("seed %d: block at %d outlived the window", seed, b.first)
			}
		}
	}
}

func TestRSAcrossESIWrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	e, _ := NewRSEncoder(3, 2)
	enc := e.(*rsEncoder)
	const before = 7 // not a multiple of 3: a block straddles the wrap
	enc.next = 1<<32 - before
	var sent []sentPacket
	for i, p := range randomPayloads(rng, 30, 60) {
		sent = append(sent, sentPacket{esi: uint32(1<<32-before) + uint32(i), data: p})
		for _, r := range enc.AddSource(p) {
			sent = append(sent, sentPacket{repair: true, data: slices.Clone(r)})
		}
	}
	for pattern := range uint64(1) << 10 {
		lost := make([]bool, len(sent))
		copy(lost, lossMask(pattern, 10)) // blocks 0 and 1, ESIs up to 2
		dec, _ := NewRSDecoder(3, 2)
		got := deliver(t, dec, sent, lost, nil)
		sameSet(t, got.recovered, rsOracle(sent, lost, 3, 2), fmt.Sprintf("pattern %b", pattern))
	}
}

func TestRSBadParameters(t *testing.T) {
	for _, tc := range []struct{ data, parity int }{{0, 1}, {1, 0}, {-1, 2}, {200, 57}, {256, 1}} {
		if _, err := NewRSEncoder(tc.data, tc.parity); err == nil {
			t.Errorf("NewRSEncoder(%d, %d) accepted", tc.data, tc.parity)
		}
		if _, err := NewRSDecoder(tc.data, tc.parity); err == nil {
			t.Errorf("NewRSDecoder(%d, %d) accepted", tc.data, tc.parity)
		}
	}
}

func TestRSUnprotectedOversizedSource(t *testing.T) {
	enc, _ := NewRSEncoder(3, 1)
	payloads := [][]byte{[]byte("one"), make([]byte, maxProtectedPayload+1), []byte("three")}
	sent := encodeStream(enc, payloads)
	for lostESI := range uint32(3) {
		lost := make([]bool, len(sent))
		lost[lostESI] = true
		dec, _ := NewRSDecoder(3, 1)
		got := deliver(t, dec, sent, lost, nil)
		if want := lostESI != 1; got.recovered[lostESI] != want {
			t.Fatalf("lost ESI %d: recovered %v, want %v", lostESI, got.recovered[lostESI], want)
		}
	}
}
