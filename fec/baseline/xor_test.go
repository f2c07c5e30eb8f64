package baseline

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/satquic/satquic/fec"
)

// xorOracle: a block of k sources is rebuilt when exactly one of them is
// lost and its parity arrives, which is the block model with one parity.
func xorOracle(sent []sentPacket, lost []bool, k int) map[uint32]bool {
	return rsOracle(sent, lost, k, 1)
}

func TestXORParityEveryLossPattern(t *testing.T) {
	for _, tc := range []struct{ k, blocks int }{{1, 4}, {2, 4}, {3, 3}, {4, 2}, {5, 2}} {
		t.Run(fmt.Sprintf("k=%d", tc.k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.k), 1))
			payloads := randomPayloads(rng, tc.k*tc.blocks, 40)
			enc, err := NewXOREncoder(tc.k)
			if err != nil {
				t.Fatal(err)
			}
			sent := encodeStream(enc, payloads)
			if len(sent) != (tc.k+1)*tc.blocks {
				t.Fatalf("%d packets sent, want %d", len(sent), (tc.k+1)*tc.blocks)
			}
			for pattern := range uint64(1) << len(sent) {
				lost := lossMask(pattern, len(sent))
				dec, err := NewXORDecoder(tc.k)
				if err != nil {
					t.Fatal(err)
				}
				got := deliver(t, dec, sent, lost, nil)
				sameSet(t, got.recovered, xorOracle(sent, lost, tc.k), fmt.Sprintf("pattern %b", pattern))
			}
		})
	}
}

func TestXORParityRepairsArriveFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const k = 4
	enc, _ := NewXOREncoder(k)
	sent := encodeStream(enc, randomPayloads(rng, 8*k, 100))
	// Reverse order: every repair comes before the sources it covers.
	order := identityOrder(len(sent))
	for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
		order[i], order[j] = order[j], order[i]
	}
	for lostSource := range len(sent) {
		if sent[lostSource].repair {
			continue
		}
		lost := make([]bool, len(sent))
		lost[lostSource] = true
		dec, _ := NewXORDecoder(k)
		got := deliver(t, dec, sent, lost, order)
		if !got.recovered[sent[lostSource].esi] {
			t.Fatalf("ESI %d not recovered when repairs arrive first", sent[lostSource].esi)
		}
	}
}

func TestXORParityOverheadExact(t *testing.T) {
	for _, k := range []int{1, 3, 10, 64} {
		enc, _ := NewXOREncoder(k)
		repairs := 0
		const n = 64 * 30
		for range n {
			repairs += len(enc.AddSource([]byte{1, 2, 3}))
		}
		if repairs*k != n {
			t.Errorf("k=%d: %d repairs for %d sources, want %d", k, repairs, n, n/k)
		}
	}
}

func TestXORParityRandomLoss(t *testing.T) {
	seed := uint64(rand.Uint32())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for _, k := range []int{2, 5, 20} {
		enc, _ := NewXOREncoder(k)
		sent := encodeStream(enc, randomPayloads(rng, 3000, 1400))
		lost := uniformLoss(rng, len(sent), 0.05)
		dec, _ := NewXORDecoder(k)
		got := deliver(t, dec, sent, lost, jitterOrder(rng, len(sent), 8))
		sameSet(t, got.recovered, xorOracle(sent, lost, k), fmt.Sprintf("seed %d k=%d", seed, k))
	}
}

func TestXORParityBadParameters(t *testing.T) {
	for _, k := range []int{0, -1, 1 << 16} {
		if _, err := NewXOREncoder(k); err == nil {
			t.Errorf("NewXOREncoder(%d) accepted", k)
		}
		if _, err := NewXORDecoder(k); err == nil {
			t.Errorf("NewXORDecoder(%d) accepted", k)
		}
	}
}

func TestXORParityFeedbackIgnored(t *testing.T) {
	enc, _ := NewXOREncoder(4)
	if out := enc.OnFeedback(fec.Feedback{Sources: 100, Lost: 50}); out != nil {
		t.Fatalf("feedback produced %d packets", len(out))
	}
}
