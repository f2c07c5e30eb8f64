package fec

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// naiveRepair computes a repair's coded symbol straight from RFC 8681
// section 3.5 with the slow field multiplication: the reference the
// encoder is checked against.
func naiveRepair(id RepairID, window [][]byte) []byte {
	cc := make([]byte, len(window))
	if err := GenerateCodingCoefficients(id.Key, cc, id.DT, 8); err != nil {
		panic(err)
	}
	size := 0
	for _, p := range window {
		size = max(size, 2+len(p))
	}
	out := make([]byte, size)
	for j, p := range window {
		coded := appendCodedSymbol(nil, p)
		for i, v := range coded {
			out[i] ^= gfMulSlow(cc[j], v)
		}
	}
	return out
}

func randomPayload(rng *rand.Rand, maxLen int) []byte {
	p := make([]byte, rng.IntN(maxLen+1))
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return p
}

func TestEncoderRepairsMatchReference(t *testing.T) {
	const seed = 11
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, dt := range []uint8{15, 9, 2} {
		enc, err := NewEncoder(EncoderConfig{MaxWindow: 40, DT: dt, FirstESI: 0xFFFFFFF0, FirstRepairKey: 0xFFFE})
		if err != nil {
			t.Fatal(err)
		}
		var sent [][]byte
		prevKey := -1
		for i := range 120 {
			p := randomPayload(rng, 90)
			esi, err := enc.AddSource(p)
			if err != nil {
				t.Fatal(err)
			}
			if esi != 0xFFFFFFF0+uint32(i) {
				t.Fatalf("source %d got ESI %#x", i, esi)
			}
			sent = append(sent, p)
			if i%3 == 0 {
				enc.SetWindow(1 + rng.IntN(45))
			}
			pkt, err := enc.AppendRepair(nil)
			if err != nil {
				t.Fatal(err)
			}
			id, err := ParseRepairID(pkt)
			if err != nil {
				t.Fatal(err)
			}
			n := min(enc.Window(), len(sent), 40)
			if int(id.NSS) != n || id.FirstESI != esi-uint32(n)+1 || id.DT != dt {
				t.Fatalf("seed %d DT %d repair %d: ID %+v, want NSS %d ending at %#x", seed, dt, i, id, n, esi)
			}
			if prevKey >= 0 && id.Key == uint16(prevKey) {
				t.Fatalf("repair key %d repeated", id.Key)
			}
			if dt == 15 && prevKey >= 0 && id.Key != uint16(prevKey+1) {
				t.Fatalf("dense repair keys not successive: %d then %d", prevKey, id.Key)
			}
			prevKey = int(id.Key)
			want := naiveRepair(id, sent[len(sent)-n:])
			if !bytes.Equal(pkt[RepairIDLen:], want) {
				t.Fatalf("seed %d DT %d repair %d differs from the reference", seed, dt, i)
			}
		}
	}
}

func TestEncoderConfigErrors(t *testing.T) {
	bad := []EncoderConfig{
		{MaxWindow: -1},
		{MaxWindow: MaxNSS + 1},
		{DT: 16},
		{MaxSymbolSize: -5},
		{MaxSymbolSize: MaxSymbolSize + 1},
	}
	for _, cfg := range bad {
		if _, err := NewEncoder(cfg); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%+v: got %v, want ErrBadConfig", cfg, err)
		}
	}
	enc, err := NewEncoder(EncoderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if enc.Window() != MaxNSS {
		t.Errorf("default window %d, want %d", enc.Window(), MaxNSS)
	}
}

func TestEncoderRejectsOversizedSource(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{MaxSymbolSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.AddSource(make([]byte, 101)); !errors.Is(err, ErrSymbolTooLarge) {
		t.Fatalf("got %v, want ErrSymbolTooLarge", err)
	}
	if enc.NextESI() != 0 || enc.Len() != 0 {
		t.Fatal("a rejected source took an ESI")
	}
	if _, err := enc.AddSource(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
}

func TestEncoderEmptyWindow(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{MaxWindow: 8})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.AppendRepair(nil); !errors.Is(err, ErrEmptyWindow) {
		t.Fatalf("fresh encoder: got %v, want ErrEmptyWindow", err)
	}
	for range 5 {
		if _, err := enc.AddSource([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	enc.Forget(enc.NextESI())
	if _, err := enc.AppendRepair(nil); !errors.Is(err, ErrEmptyWindow) {
		t.Fatalf("all forgotten: got %v, want ErrEmptyWindow", err)
	}
}

func TestEncoderWindowAndForget(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{MaxWindow: 10, FirstESI: 0xFFFFFFFE})
	if err != nil {
		t.Fatal(err)
	}
	for range 25 {
		if _, err := enc.AddSource([]byte{1, 2}); err != nil {
			t.Fatal(err)
		}
	}
	if enc.Len() != 10 {
		t.Fatalf("Len %d, want MaxWindow 10", enc.Len())
	}
	enc.SetWindow(4)
	if enc.Len() != 4 || enc.Window() != 4 {
		t.Fatalf("after SetWindow(4): Len %d Window %d", enc.Len(), enc.Window())
	}
	enc.SetWindow(100)
	if enc.Window() != 10 || enc.Len() != 10 {
		t.Fatalf("SetWindow above MaxWindow: Window %d Len %d", enc.Window(), enc.Len())
	}
	enc.SetWindow(0)
	if enc.Window() != 1 {
		t.Fatalf("SetWindow(0): Window %d, want 1", enc.Window())
	}
	enc.SetWindow(10)
	next := enc.NextESI() // 0xFFFFFFFE + 25 = 23
	enc.Forget(next - 3)
	if enc.Len() != 3 {
		t.Fatalf("after Forget(next-3): Len %d, want 3", enc.Len())
	}
	enc.Forget(next - 8) // older than what is kept: no effect
	if enc.Len() != 3 {
		t.Fatalf("Forget of older ESI changed Len to %d", enc.Len())
	}
	pkt, err := enc.AppendRepair(nil)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := ParseRepairID(pkt)
	if id.FirstESI != next-3 || id.NSS != 3 {
		t.Fatalf("repair after Forget: %+v", id)
	}
	enc.Forget(next + 100) // beyond the newest: forgets everything, no more
	if enc.Len() != 0 {
		t.Fatalf("Len %d after forgetting all", enc.Len())
	}
	if esi, _ := enc.AddSource(nil); esi != next {
		t.Fatalf("next ESI after Forget beyond the end: %d, want %d", esi, next)
	}
}

// With DT < 15 a tiny window often draws all-zero coefficients; the
// encoder skips such keys rather than send a useless repair.
func TestEncoderSkipsAllZeroRows(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{MaxWindow: 1, DT: 0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.AddSource([]byte("payload")); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		pkt, err := enc.AppendRepair(nil)
		if err != nil {
			t.Fatal(err)
		}
		if allZero(pkt[RepairIDLen:]) {
			id, _ := ParseRepairID(pkt)
			t.Fatalf("repair with key %d is all zero", id.Key)
		}
	}
}

func TestEncoderRepairAllocatesNothing(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{MaxWindow: 64})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 1200)
	buf := make([]byte, 0, 2000)
	for range 200 {
		if _, err := enc.AddSource(payload); err != nil {
			t.Fatal(err)
		}
		if _, err := enc.AppendRepair(buf[:0]); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		_, _ = enc.AddSource(payload)
		_, _ = enc.AppendRepair(buf[:0])
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per source+repair, want 0", allocs)
	}
}

// TestEncoderRepairLen: RepairLen is the length AppendRepair gives, the
// Repair FEC Payload ID and the longest coded symbol (2 + its length) of
// the window, which SetWindow and Forget move.
func TestEncoderRepairLen(t *testing.T) {
	enc, err := NewEncoder(EncoderConfig{MaxWindow: 8})
	if err != nil {
		t.Fatal(err)
	}
	if n := enc.RepairLen(); n != 0 {
		t.Errorf("empty window: RepairLen %d, want 0", n)
	}
	for _, size := range []int{1000, 40, 300, 60} {
		if _, err := enc.AddSource(make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ window, want int }{{8, RepairIDLen + 1002}, {3, RepairIDLen + 302}, {1, RepairIDLen + 62}} {
		enc.SetWindow(c.window)
		if got := enc.RepairLen(); got != c.want {
			t.Errorf("window %d: RepairLen %d, want %d", c.window, got, c.want)
		}
		r, err := enc.AppendRepair(nil)
		if err != nil || len(r) != c.want {
			t.Errorf("window %d: AppendRepair gave %d bytes (%v), want %d", c.window, len(r), err, c.want)
		}
	}
	enc.SetWindow(8)
	enc.Forget(1)
	if got := enc.RepairLen(); got != RepairIDLen+302 {
		t.Errorf("after Forget: RepairLen %d, want %d", got, RepairIDLen+302)
	}
}
