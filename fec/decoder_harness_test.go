package fec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// A randomized end-to-end harness: an Encoder produces sources and
// repairs, a loss model drops some, packets may be reordered, and a
// Decoder receives the rest. Every recovered symbol must be exactly the
// original; and, when the decoder's window holds the whole run, every
// symbol that the received equations determine must be recovered (checked
// against an independent dense elimination).

// codecLossModel decides, packet by packet, whether a packet is lost.
type codecLossModel interface {
	lost(rng *rand.Rand) bool
}

// codecUniformLoss drops each packet with probability p.
type codecUniformLoss struct{ p float64 }

func (u *codecUniformLoss) lost(rng *rand.Rand) bool { return rng.Float64() < u.p }

// codecBurstLoss is a two-state Gilbert-Elliott model: everything is lost in
// the bad state; p is the good->bad and r the bad->good probability, and
// the drop decision uses the state before the transition.
type codecBurstLoss struct {
	p, r float64
	bad  bool
}

func (g *codecBurstLoss) lost(rng *rand.Rand) bool {
	drop := g.bad
	if g.bad {
		g.bad = rng.Float64() >= g.r
	} else {
		g.bad = rng.Float64() < g.p
	}
	return drop
}

type codecTrial struct {
	seed       uint64
	sources    int
	encWindow  int     // encoder MaxWindow
	varyWindow bool    // change the encoder's window now and then
	maxSize    int     // largest payload
	dt         uint8   // density threshold
	repairRate float64 // mean repairs per source
	loss       codecLossModel
	reorder    int // packets move up to this many places later
	firstESI   uint32
	decoder    DecoderConfig
	// complete asks for the full-rank check; it needs a decoder window
	// that holds the whole run.
	complete bool
}

type trialPacket struct {
	repair bool
	esi    uint32 // sources
	data   []byte // payload, or the whole repair packet
}

// trialResult is what a trial observed.
type trialResult struct {
	lost, recovered, determined int
	stats                       DecoderStats
}

func (tr codecTrial) String() string {
	return fmt.Sprintf("seed %d: %d sources, window %d, size <= %d, DT %d, %.3f repairs/source, reorder %d, first ESI %#x, decoder %+v",
		tr.seed, tr.sources, tr.encWindow, tr.maxSize, tr.dt, tr.repairRate, tr.reorder, tr.firstESI, tr.decoder)
}

// run executes the trial and fails t on any wrong byte or missed
// recovery.
func (tr codecTrial) run(t testing.TB) trialResult {
	t.Helper()
	rng := rand.New(rand.NewPCG(tr.seed, 0x5eed))
	originals, packets := tr.encode(t, rng)
	delivered := tr.deliver(rng, packets)

	dec, err := NewDecoder(tr.decoder)
	if err != nil {
		t.Fatalf("%v: %v", tr, err)
	}
	received := make(map[uint32]bool)
	recovered := make(map[uint32]bool)
	var repairs []RepairID
	step := 0
	for _, pkt := range delivered {
		var recs []Recovered
		if pkt.repair {
			recs, err = dec.AddRepair(pkt.data)
			if err != nil {
				t.Fatalf("%v: genuine repair rejected: %v", tr, err)
			}
			id, _ := ParseRepairID(pkt.data)
			repairs = append(repairs, id)
		} else {
			recs = dec.AddSource(pkt.esi, pkt.data)
			received[pkt.esi] = true
		}
		for _, r := range recs {
			orig, ok := originals[r.ESI]
			switch {
			case !ok:
				t.Fatalf("%v: recovered unknown ESI %#x", tr, r.ESI)
			case !bytes.Equal(r.Data, orig):
				t.Fatalf("%v: ESI %#x recovered as %d wrong bytes (original %d)", tr, r.ESI, len(r.Data), len(orig))
			case recovered[r.ESI]:
				t.Fatalf("%v: ESI %#x recovered twice", tr, r.ESI)
			case received[r.ESI]:
				t.Fatalf("%v: ESI %#x recovered after it was received", tr, r.ESI)
			}
			recovered[r.ESI] = true
		}
		if st := dec.Stats(); st.Pending > dec.cfg.MaxPending {
			t.Fatalf("%v: %d equations pending, MaxPending %d", tr, st.Pending, dec.cfg.MaxPending)
		}
		if step++; step%16 == 0 {
			checkHoles(t, dec)
		}
	}
	checkHoles(t, dec)
	res := trialResult{recovered: len(recovered), stats: dec.Stats()}
	var lost []uint32
	for esi := range originals {
		if !received[esi] {
			lost = append(lost, esi)
		}
	}
	res.lost = len(lost)
	if tr.complete {
		determined := determinedUnknowns(lost, repairs)
		res.determined = len(determined)
		isDetermined := make(map[uint32]bool, len(determined))
		for _, esi := range determined {
			isDetermined[esi] = true
		}
		for _, esi := range lost {
			if recovered[esi] && !isDetermined[esi] {
				t.Fatalf("%v: ESI %#x recovered although the received equations do not determine it", tr, esi)
			}
		}
		for _, esi := range determined {
			if !recovered[esi] {
				t.Fatalf("%v: ESI %#x is determined by the received equations but was not recovered (%d lost, %d determined, %d recovered, stats %+v)",
					tr, esi, len(lost), len(determined), len(recovered), res.stats)
			}
		}
	}
	return res
}

// encode runs the encoder over the trial's sources and returns the
// originals by ESI and the packets in sending order.
func (tr codecTrial) encode(t testing.TB, rng *rand.Rand) (map[uint32][]byte, []trialPacket) {
	enc, err := NewEncoder(EncoderConfig{MaxWindow: tr.encWindow, DT: tr.dt, MaxSymbolSize: tr.maxSize, FirstESI: tr.firstESI, FirstRepairKey: uint16(rng.Uint32())})
	if err != nil {
		t.Fatalf("%v: %v", tr, err)
	}
	originals := make(map[uint32][]byte)
	var packets []trialPacket
	credit := 0.0
	for range tr.sources {
		p := randomPayload(rng, tr.maxSize)
		esi, err := enc.AddSource(p)
		if err != nil {
			t.Fatalf("%v: %v", tr, err)
		}
		originals[esi] = p
		packets = append(packets, trialPacket{esi: esi, data: p})
		if tr.varyWindow && rng.IntN(8) == 0 {
			enc.SetWindow(1 + rng.IntN(tr.encWindow))
		}
		for credit += tr.repairRate * 2 * rng.Float64(); credit >= 1; credit-- {
			pkt, err := enc.AppendRepair(nil)
			if err != nil {
				t.Fatalf("%v: %v", tr, err)
			}
			packets = append(packets, trialPacket{repair: true, data: pkt})
		}
	}
	return originals, packets
}

// deliver applies losses and a bounded reordering.
func (tr codecTrial) deliver(rng *rand.Rand, packets []trialPacket) []trialPacket {
	var out []trialPacket
	for _, p := range packets {
		if !tr.loss.lost(rng) {
			out = append(out, p)
		}
	}
	if tr.reorder > 0 {
		for i := range out {
			j := min(len(out)-1, i+rng.IntN(tr.reorder+1))
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// determinedUnknowns returns the lost ESIs that the repairs determine:
// those whose unit vector lies in the row space of the repairs'
// coefficients restricted to the lost columns. It is a plain dense
// Gauss-Jordan elimination, independent of the decoder's.
func determinedUnknowns(lost []uint32, repairs []RepairID) []uint32 {
	column := make(map[uint32]int, len(lost))
	for i, esi := range lost {
		column[esi] = i
	}
	var rows [][]byte
	for _, id := range repairs {
		cc := make([]byte, id.NSS)
		if err := GenerateCodingCoefficients(id.Key, cc, id.DT, 8); err != nil {
			panic(err)
		}
		row := make([]byte, len(lost))
		nonZero := false
		for j, c := range cc {
			if col, ok := column[id.FirstESI+uint32(j)]; ok && c != 0 {
				row[col], nonZero = c, true
			}
		}
		if nonZero {
			rows = append(rows, row)
		}
	}
	pivotRow := make([]int, len(lost))
	for i := range pivotRow {
		pivotRow[i] = -1
	}
	rank := 0
	for col := range lost {
		sel := -1
		for r := rank; r < len(rows); r++ {
			if rows[r][col] != 0 {
				sel = r
				break
			}
		}
		if sel < 0 {
			continue
		}
		rows[rank], rows[sel] = rows[sel], rows[rank]
		inv := gfInv(rows[rank][col])
		for k := range rows[rank] {
			rows[rank][k] = gfMulSlow(inv, rows[rank][k])
		}
		for r := range rows {
			if r != rank && rows[r][col] != 0 {
				f := rows[r][col]
				for k := range rows[r] {
					rows[r][k] ^= gfMulSlow(f, rows[rank][k])
				}
			}
		}
		pivotRow[col] = rank
		rank++
	}
	var determined []uint32
	for col, r := range pivotRow {
		if r < 0 {
			continue
		}
		single := true
		for k, v := range rows[r] {
			if k != col && v != 0 {
				single = false
				break
			}
		}
		if single {
			determined = append(determined, lost[col])
		}
	}
	return determined
}

// checkHoles verifies the decoder's hole list against its slots: the
// holes are exactly the ESIs of the window, up to the newest and from the
// first ESI seen, that are neither received nor recovered, in order.
func checkHoles(t testing.TB, d *Decoder) {
	t.Helper()
	if !d.started {
		return
	}
	start := d.newest - uint32(d.cfg.MaxWindow) + 1
	if d.floorActive {
		start = d.floor
	}
	var want []uint32
	for e := start; e != d.newest+1; e++ {
		if _, ok := d.known(e); !ok {
			want = append(want, e)
		}
	}
	if fmt.Sprint(want) != fmt.Sprint(d.holes.esis) {
		t.Fatalf("holes %v, want %v (newest %#x, floor %#x active %v)", d.holes.esis, want, d.newest, d.floor, d.floorActive)
	}
}
