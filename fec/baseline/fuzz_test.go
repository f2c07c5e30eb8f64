package baseline

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/satquic/satquic/fec"
)

// Fuzz targets of the baselines. The parser targets feed arbitrary bytes
// to the repair parsers and decoders: no panic, and what parses must
// serialize back to the same bytes. The decoder targets derive a whole
// scenario from the input (code parameters, packet sizes, losses,
// reordering, duplicates, damaged repairs) and check that every recovered
// packet is exactly the original and that the decoder recovers what the
// code's model says it can.

func FuzzXORRepairParse(f *testing.F) {
	enc, _ := NewMaelstromEncoder(MaelstromConfig{Interleaves: []int{1, 3}, Window: 3})
	for _, r := range repairsOf(encodeStream(enc, [][]byte{{1}, {2, 3}, {}, {4}, {5}, {6}, {7}, {8}, {9}})) {
		f.Add(r)
	}
	f.Add([]byte{xorRepairTag})
	f.Fuzz(func(t *testing.T, packet []byte) {
		h, body, err := parseXORRepair(packet)
		dec, _ := NewMaelstromDecoder(MaelstromConfig{Interleaves: []int{1, 3}, Window: 3})
		for esi := range uint32(8) {
			dec.AddSource(esi, []byte{byte(esi), byte(esi)})
		}
		recs, decErr := dec.AddRepair(packet)
		if err != nil {
			if !errors.Is(decErr, ErrMalformedRepair) || recs != nil {
				t.Fatalf("parser refuses (%v) but decoder gives %v, %v", err, recs, decErr)
			}
			return
		}
		again := make([]byte, xorRepairHeaderLen, xorRepairHeaderLen+len(body))
		h.put(again)
		if string(append(again, body...)) != string(packet) {
			t.Fatalf("%x parses as %+v but serializes to %x", packet, h, again)
		}
	})
}

func FuzzRSRepairParse(f *testing.F) {
	enc, _ := NewRSEncoder(3, 2)
	for _, r := range repairsOf(encodeStream(enc, [][]byte{{1}, {2, 3}, {}})) {
		f.Add(r)
	}
	f.Add([]byte{rsRepairTag, 0, 0, 0, 0, 3, 2, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, packet []byte) {
		h, shard, err := parseRSRepair(packet)
		dec, _ := NewRSDecoder(3, 2)
		dec.AddSource(0, []byte{9})
		recs, decErr := dec.AddRepair(packet)
		if err != nil {
			if !errors.Is(decErr, ErrMalformedRepair) || recs != nil {
				t.Fatalf("parser refuses (%v) but decoder gives %v, %v", err, recs, decErr)
			}
			return
		}
		again := make([]byte, rsRepairHeaderLen, rsRepairHeaderLen+len(shard))
		h.put(again)
		if string(append(again, shard...)) != string(packet) {
			t.Fatalf("%x parses as %+v but serializes to %x", packet, h, again)
		}
	})
}

// fuzzScenario is a stream shaped by fuzz input: code parameters come
// from params, the rest from a generator seeded by seed.
type fuzzScenario struct {
	rng       *rand.Rand
	sources   int
	maxLen    int
	loss      float64
	maxShift  int
	dupes     int
	truncates int
}

func newFuzzScenario(seed uint64, shape uint32) fuzzScenario {
	return fuzzScenario{
		rng:       rand.New(rand.NewPCG(seed, uint64(shape))),
		sources:   1 + int(shape%300),
		maxLen:    int(shape >> 9 % 64),
		loss:      float64(shape>>15%128) / 255,
		maxShift:  int(shape >> 22 % 8),
		dupes:     int(shape >> 25 % 8),
		truncates: int(shape >> 28 % 4),
	}
}

// run encodes the scenario's stream with enc, damages it, delivers it to
// dec and returns the stream and its loss mask for the oracle.
func (s fuzzScenario) run(t *testing.T, enc fec.SchemeEncoder, dec fec.SchemeDecoder) ([]sentPacket, []bool, delivery) {
	sent := encodeStream(enc, randomPayloads(s.rng, s.sources, s.maxLen))
	lost := uniformLoss(s.rng, len(sent), s.loss)
	order := jitterOrder(s.rng, len(sent), s.maxShift)
	repairs := repairsOf(sent)
	for range s.truncates {
		if len(repairs) == 0 {
			break
		}
		r := repairs[s.rng.IntN(len(repairs))]
		sent = append(sent, sentPacket{repair: true, malformed: true, data: r[:s.rng.IntN(len(r))]})
		lost = append(lost, false)
		at := s.rng.IntN(len(order) + 1)
		order = append(order[:at], append([]int{len(sent) - 1}, order[at:]...)...)
	}
	for range s.dupes {
		// A duplicate arrives some time after its original.
		from := s.rng.IntN(len(order))
		dup := order[from]
		at := from + 1 + s.rng.IntN(len(order)-from)
		order = append(order[:at], append([]int{dup}, order[at:]...)...)
	}
	return sent, lost, deliver(t, dec, sent, lost, order)
}

func FuzzMaelstromDecoder(f *testing.F) {
	f.Add(uint64(1), uint32(0x1234_5678), uint8(0x21))
	f.Add(uint64(2), uint32(0xFFFF_FFFF), uint8(0x03))
	f.Add(uint64(3), uint32(200), uint8(0x45))
	f.Fuzz(func(t *testing.T, seed uint64, shape uint32, code uint8) {
		cfg := fuzzMaelstromConfig(code)
		s := newFuzzScenario(seed, shape)
		enc, err := NewMaelstromEncoder(cfg)
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := NewMaelstromDecoder(cfg)
		sent, lost, got := s.run(t, enc, dec)
		sameSet(t, got.recovered, peelOracle(sent, lost, maelstromSets(cfg, s.sources)), cfg.String())
	})
}

// fuzzMaelstromConfig picks one to three distinct interleaves in 1..8 and
// a window in 1..4 from code's bits.
func fuzzMaelstromConfig(code uint8) MaelstromConfig {
	cfg := MaelstromConfig{Window: 1 + int(code>>6)}
	for i, interleave := range []int{1, 2, 3, 5, 8, 4} {
		if code>>i&1 == 1 && len(cfg.Interleaves) < 3 {
			cfg.Interleaves = append(cfg.Interleaves, interleave)
		}
	}
	if len(cfg.Interleaves) == 0 {
		cfg.Interleaves = []int{1}
	}
	return cfg
}

func FuzzXORDecoder(f *testing.F) {
	f.Add(uint64(1), uint32(0x0102_0304), uint8(4))
	f.Add(uint64(9), uint32(0xFFFF_FFFF), uint8(1))
	f.Fuzz(func(t *testing.T, seed uint64, shape uint32, kByte uint8) {
		k := 1 + int(kByte%32)
		s := newFuzzScenario(seed, shape)
		enc, _ := NewXOREncoder(k)
		dec, _ := NewXORDecoder(k)
		sent, lost, got := s.run(t, enc, dec)
		sameSet(t, got.recovered, rsOracle(sent, lost, k, 1), fmt.Sprintf("xor k=%d", k))
	})
}

func FuzzRSDecoder(f *testing.F) {
	f.Add(uint64(1), uint32(0x0102_0304), uint16(0x0302))
	f.Add(uint64(5), uint32(0xFFFF_FFFF), uint16(0x0A04))
	f.Fuzz(func(t *testing.T, seed uint64, shape uint32, code uint16) {
		var b [2]byte
		binary.BigEndian.PutUint16(b[:], code)
		data, parity := 1+int(b[0]%16), 1+int(b[1]%8)
		s := newFuzzScenario(seed, shape)
		enc, _ := NewRSEncoder(data, parity)
		dec, _ := NewRSDecoder(data, parity)
		sent, lost, got := s.run(t, enc, dec)
		sameSet(t, got.recovered, rsOracle(sent, lost, data, parity), fmt.Sprintf("rs %d+%d", data, parity))
	})
}

// FuzzParseMaelstrom: a layer spec is an error or a valid configuration
// whose canonical form parses back to itself.
func FuzzParseMaelstrom(f *testing.F) {
	for _, s := range []string{"1-20:20", "1-20-40:8", "M:1-11-19:8", "0:1", "1-1:2", "20:", ":20", "1-99999:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := ParseMaelstrom(s)
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("ParseMaelstrom(%q) accepted an invalid config: %v", s, err)
		}
		again, err := ParseMaelstrom(cfg.String())
		if err != nil || again.String() != cfg.String() {
			t.Fatalf("round trip of %q via %q: %v, %v", s, cfg.String(), again, err)
		}
	})
}
