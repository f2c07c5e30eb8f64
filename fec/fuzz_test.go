package fec

import (
	"bytes"
	"hash/fnv"
	"math/rand/v2"
	"testing"
)

// Fuzz targets for the RLC codec's parsers and decoder:
//
//	go test ./fec/ -run '^$' -fuzz '^FuzzParseRepairID$' -fuzztime 30s
//	go test ./fec/ -run '^$' -fuzz '^FuzzDecoder$' -fuzztime 30s
//	go test ./fec/ -run '^$' -fuzz '^FuzzDecoderHostile$' -fuzztime 30s

// FuzzParseRepairID: whatever parses re-encodes to the same 8 bytes, and
// every 8-byte input with NSS != 0 parses.
func FuzzParseRepairID(f *testing.F) {
	f.Add([]byte{0, 1, 0xF0, 0xC8, 0xFF, 0xFF, 0xFF, 0xF0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := ParseRepairID(b)
		if err != nil {
			if len(b) >= RepairIDLen && (b[2]&0x0F != 0 || b[3] != 0) {
				t.Fatalf("%x: NSS != 0 but %v", b, err)
			}
			return
		}
		if err := id.Validate(); err != nil {
			t.Fatalf("%x parsed to invalid %+v: %v", b, id, err)
		}
		if wire := id.Append(nil); !bytes.Equal(wire, b[:RepairIDLen]) {
			t.Fatalf("%x parsed to %+v, re-encoded as %x", b, id, wire)
		}
	})
}

// bitLoss drops packet i when bit i of its pattern is set (cycling), so
// that the fuzzer steers the losses.
type bitLoss struct {
	bits []byte
	i    int
}

func (b *bitLoss) lost(_ *rand.Rand) bool {
	if len(b.bits) == 0 {
		return false
	}
	bit := b.bits[(b.i/8)%len(b.bits)]>>(b.i%8)&1 == 1
	b.i++
	return bit
}

// FuzzDecoder runs the codec with a window, size, density, repair rate,
// reordering and loss pattern taken from the input: the decoder must
// return the original bytes or nothing, and everything the received
// equations determine.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte{20, 100, 15, 40, 4, 0, 0x11, 0x22, 0x44})
	f.Add([]byte{1, 10, 15, 0, 1, 0, 0xFF})
	f.Add([]byte{64, 200, 7, 100, 3, 5, 0x80, 0x01, 0xF0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 6 {
			return
		}
		h := fnv.New64a()
		h.Write(b)
		tr := codecTrial{
			seed:       h.Sum64(),
			encWindow:  1 + int(b[0])%100,
			sources:    1 + int(b[1])%300,
			dt:         b[2] % 16,
			maxSize:    1 + int(b[3])%80,
			repairRate: 1 / float64(1+int(b[4])%16),
			reorder:    int(b[5]) % 8,
			loss:       &bitLoss{bits: b[6:]},
			firstESI:   uint32(h.Sum64() >> 32),
			varyWindow: b[5]&0x80 != 0,
			decoder:    DecoderConfig{MaxWindow: MaxNSS, MaxSymbolSize: 1 + int(b[3])%80},
			complete:   true,
		}
		if b[2]&0x80 != 0 { // straddle the 2^32 -> 0 wrap
			tr.firstESI = -uint32(tr.sources / 2)
		}
		tr.run(t)
	})
}

// FuzzDecoderHostile feeds arbitrary records as repairs and sources: no
// panic, and pending equations and memory stay within the configuration.
func FuzzDecoderHostile(f *testing.F) {
	enc, _ := NewEncoder(EncoderConfig{MaxWindow: 16, DT: 15, MaxSymbolSize: 64})
	var seed []byte
	for i := range 20 {
		p := bytes.Repeat([]byte{byte(i)}, i*3)
		esi, _ := enc.AddSource(p)
		if i%3 != 0 {
			seed = append(seed, 0, byte(4+len(p)), byte(esi>>24), byte(esi>>16), byte(esi>>8), byte(esi))
			seed = append(seed, p...)
		}
		if i%2 == 1 {
			pkt, _ := enc.AppendRepair(nil)
			seed = append(seed, 1, byte(len(pkt)))
			seed = append(seed, pkt...)
		}
	}
	f.Add(seed)
	f.Add([]byte{1, 10, 0, 1, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg := DecoderConfig{MaxWindow: 32, MaxPending: 4, MaxSymbolSize: 64}
		dec, err := NewDecoder(cfg)
		if err != nil {
			t.Fatal(err)
		}
		limit := memoryLimit(dec.cfg)
		for len(b) >= 2 {
			kind, n := b[0], min(int(b[1]), len(b)-2)
			rec := b[2 : 2+n]
			b = b[2+n:]
			if kind&1 == 1 {
				recs, err := dec.AddRepair(rec)
				if err != nil && len(recs) != 0 {
					t.Fatal("an error came with recovered symbols")
				}
			} else if len(rec) >= 4 {
				esi := uint32(rec[0])<<24 | uint32(rec[1])<<16 | uint32(rec[2])<<8 | uint32(rec[3])
				dec.AddSource(esi, rec[4:])
			}
			st := dec.Stats()
			if st.Pending > cfg.MaxPending || st.MemoryBytes > limit {
				t.Fatalf("pending %d (max %d), memory %d (limit %d)", st.Pending, cfg.MaxPending, st.MemoryBytes, limit)
			}
		}
	})
}
