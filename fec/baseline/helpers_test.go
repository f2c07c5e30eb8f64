package baseline

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/satquic/satquic/fec"
)

// Test support for the baselines: a sent stream of sources and repairs,
// delivery with losses and reordering that checks every recovered packet
// against the original, and independent models of what each code can
// recover (oracles) to compare the decoders with.

// sentPacket is one packet of an encoded stream.
type sentPacket struct {
	repair bool
	esi    uint32 // sources only
	data   []byte
	// malformed marks a damaged repair that the decoder must refuse with
	// ErrMalformedRepair; oracles skip it.
	malformed bool
}

// encodeStream runs the payloads through enc and returns the packets in
// sending order (repairs copied, since the encoder reuses them).
func encodeStream(enc fec.SchemeEncoder, payloads [][]byte) []sentPacket {
	var sent []sentPacket
	for i, p := range payloads {
		sent = append(sent, sentPacket{esi: uint32(i), data: p})
		for _, r := range enc.AddSource(p) {
			sent = append(sent, sentPacket{repair: true, data: slices.Clone(r)})
		}
	}
	return sent
}

// randomPayloads returns n payloads of 0..maxLen random bytes.
func randomPayloads(rng *rand.Rand, n, maxLen int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, rng.IntN(maxLen+1))
		for j := range out[i] {
			out[i][j] = byte(rng.Uint32())
		}
	}
	return out
}

// repairsOf returns the repair packets of a stream, in order.
func repairsOf(sent []sentPacket) [][]byte {
	var out [][]byte
	for _, p := range sent {
		if p.repair {
			out = append(out, p.data)
		}
	}
	return out
}

// delivery is what a decoder made of a stream.
type delivery struct {
	// recovered lists the lost sources the decoder rebuilt.
	recovered map[uint32]bool
	// early counts sources rebuilt before they arrived late: FEC treats
	// a source overtaken by its repair as lost.
	early int
}

// deliver feeds the packets not marked lost to dec in the given order
// (nil: sending order) and checks every recovered packet: it must be a
// source not received yet, recovered once, with exactly its original
// bytes.
func deliver(t testing.TB, dec fec.SchemeDecoder, sent []sentPacket, lost []bool, order []int) delivery {
	t.Helper()
	original := map[uint32][]byte{}
	lostSource := map[uint32]bool{}
	for i, p := range sent {
		if !p.repair {
			original[p.esi] = p.data
			lostSource[p.esi] = lost[i]
		}
	}
	res := delivery{recovered: map[uint32]bool{}}
	seen := map[uint32]bool{} // received or recovered
	check := func(recs []fec.Recovered) {
		for _, r := range recs {
			want, ok := original[r.ESI]
			switch {
			case !ok:
				t.Fatalf("recovered ESI %d, which was never sent", r.ESI)
			case seen[r.ESI]:
				t.Fatalf("recovered ESI %d, which was already received or recovered", r.ESI)
			case !bytes.Equal(r.Data, want):
				t.Fatalf("ESI %d recovered as %x, want %x", r.ESI, r.Data, want)
			}
			seen[r.ESI] = true
			if lostSource[r.ESI] {
				res.recovered[r.ESI] = true
			} else {
				res.early++
			}
		}
	}
	if order == nil {
		order = identityOrder(len(sent))
	}
	for _, i := range order {
		if lost[i] {
			continue
		}
		p := sent[i]
		if p.malformed {
			if recs, err := dec.AddRepair(p.data); !errors.Is(err, ErrMalformedRepair) || recs != nil {
				t.Fatalf("damaged repair %x: %d recovered, err %v", p.data, len(recs), err)
			}
			continue
		}
		if !p.repair {
			recs := dec.AddSource(p.esi, p.data)
			seen[p.esi] = true
			check(recs)
			continue
		}
		recs, err := dec.AddRepair(p.data)
		if err != nil {
			t.Fatalf("AddRepair of a genuine repair: %v", err)
		}
		check(recs)
	}
	return res
}

func identityOrder(n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	return order
}

// jitterOrder is sending order with each packet delayed by up to maxShift
// places: the reordering of a real path.
func jitterOrder(rng *rand.Rand, n, maxShift int) []int {
	order := identityOrder(n)
	due := make([]int, n)
	for i := range due {
		due[i] = i + rng.IntN(maxShift+1)
	}
	slices.SortStableFunc(order, func(a, b int) int { return due[a] - due[b] })
	return order
}

// lossMask returns the losses of pattern's bits over n packets.
func lossMask(pattern uint64, n int) []bool {
	lost := make([]bool, n)
	for i := range lost {
		lost[i] = pattern>>i&1 == 1
	}
	return lost
}

// uniformLoss drops each packet with probability p.
func uniformLoss(rng *rand.Rand, n int, p float64) []bool {
	lost := make([]bool, n)
	for i := range lost {
		lost[i] = rng.Float64() < p
	}
	return lost
}

// peelOracle computes which lost sources a set of XOR repairs recovers:
// sets[r] lists the ESIs repair r covers, and repairs are taken in any
// order until none rebuilds anything more. It knows nothing of windows.
func peelOracle(sent []sentPacket, lost []bool, sets [][]uint32) map[uint32]bool {
	known := map[uint32]bool{}
	var usable [][]uint32
	r := 0
	for i, p := range sent {
		switch {
		case p.malformed:
		case !p.repair && !lost[i]:
			known[p.esi] = true
		case p.repair:
			if !lost[i] {
				usable = append(usable, sets[r])
			}
			r++
		}
	}
	recovered := map[uint32]bool{}
	for progress := true; progress; {
		progress = false
		for _, set := range usable {
			var missing []uint32
			for _, esi := range set {
				if !known[esi] {
					missing = append(missing, esi)
				}
			}
			if len(missing) == 1 {
				known[missing[0]], recovered[missing[0]] = true, true
				progress = true
			}
		}
	}
	return recovered
}

// maelstromSets models which ESIs each repair of cfg covers, in sending
// order, for n sources: bin n mod I of each layer, W sources per repair.
func maelstromSets(cfg MaelstromConfig, n int) [][]uint32 {
	bins := make([][][]uint32, len(cfg.Interleaves))
	for l, interleave := range cfg.Interleaves {
		bins[l] = make([][]uint32, interleave)
	}
	var sets [][]uint32
	for esi := range uint32(n) {
		for l, interleave := range cfg.Interleaves {
			b := int(esi) % interleave
			bins[l][b] = append(bins[l][b], esi)
			if len(bins[l][b]) == cfg.Window {
				sets = append(sets, bins[l][b])
				bins[l][b] = nil
			}
		}
	}
	return sets
}

// rsOracle computes which lost sources block RS recovers: all of a block's
// once it has received at least data of its data+parity shards.
func rsOracle(sent []sentPacket, lost []bool, data, parity int) map[uint32]bool {
	recovered := map[uint32]bool{}
	block, received := 0, 0
	var lostInBlock []uint32
	for i, p := range sent {
		if p.malformed {
			continue
		}
		if !lost[i] {
			received++
		} else if !p.repair {
			lostInBlock = append(lostInBlock, p.esi)
		}
		if i-block == data+parity-1 {
			if received >= data {
				for _, esi := range lostInBlock {
					recovered[esi] = true
				}
			}
			block, received, lostInBlock = i+1, 0, nil
		}
	}
	return recovered
}

// sameSet reports a difference between the recovered ESIs and the
// oracle's.
func sameSet(t testing.TB, got, want map[uint32]bool, context string) {
	t.Helper()
	for esi := range want {
		if !got[esi] {
			t.Fatalf("%s: ESI %d not recovered (recovered %d of %d expected)", context, esi, len(got), len(want))
		}
	}
	for esi := range got {
		if !want[esi] {
			t.Fatalf("%s: ESI %d recovered, which the oracle cannot", context, esi)
		}
	}
}
