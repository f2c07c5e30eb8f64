package core

import (
	"bytes"
	"testing"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// budgetRun drives one direction of a connection's FEC sender packet by
// packet, the way the connection does (sources, a tail when it goes idle,
// acknowledgements), and records the source and repair bytes sent after
// every step.
type budgetRun struct {
	t       *testing.T
	f       *fecSender
	pn      uint64
	unacked []uint64
	// sources and repairs are the bytes sent up to each step; tails
	// counts the tails, covered those that got a repair.
	sources, repairs []uint64
	tails, covered   int
}

func newBudgetRun(t *testing.T, maxOverhead float64) *budgetRun {
	t.Helper()
	cfg, err := (&FECConfig{MaxOverhead: maxOverhead}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	f, err := newFECSender(cfg, 1024, 1400)
	if err != nil {
		t.Fatal(err)
	}
	return &budgetRun{t: t, f: f, pn: 1}
}

func (r *budgetRun) step() {
	r.sources = append(r.sources, r.f.stats.SourceBytesSent)
	r.repairs = append(r.repairs, r.f.stats.RepairBytesSent)
}

// burst sends sources of the given sizes, each followed by the repairs
// the controller owes, then the tail's repairs.
func (r *budgetRun) burst(sizes ...int) {
	for _, n := range sizes {
		if err := r.f.onSourceSent(r.pn, bytes.Repeat([]byte{byte(r.pn)}, n)); err != nil {
			r.t.Fatal(err)
		}
		r.unacked = append(r.unacked, r.pn)
		r.pn++
		_, r.pn = drainRepairs(r.f, r.pn)
		r.step()
	}
	before := r.f.stats.RepairsSent
	r.f.protectTail()
	_, r.pn = drainRepairs(r.f, r.pn)
	r.tails++
	if r.f.stats.RepairsSent > before {
		r.covered++
	}
	r.step()
}

// ackAll acknowledges every source sent.
func (r *budgetRun) ackAll() {
	res := &recovery.Result{}
	for _, pn := range r.unacked {
		res.Acked = append(res.Acked, recovery.PacketInfo{Space: spaceApp, Number: pn})
	}
	r.unacked = r.unacked[:0]
	r.f.onResult(res)
}

// checkBound checks the allowance's promise over every stretch of the
// run: repair bytes at most maxOverhead of the source bytes, beside the
// fecMaxCredit full repairs saved up before it.
func (r *budgetRun) checkBound(maxOverhead float64) {
	r.t.Helper()
	slack := fecMaxCredit * r.f.budget.full
	for i := range r.sources {
		for j := i + 1; j < len(r.sources); j++ {
			src, rep := float64(r.sources[j]-r.sources[i]), float64(r.repairs[j]-r.repairs[i])
			if rep > maxOverhead*src+slack {
				r.t.Fatalf("steps %d to %d: %v repair bytes for %v source bytes, more than %v of them and %v", i, j, rep, src, maxOverhead, slack)
			}
		}
	}
}

// TestFECBudgetBoundsRepairBytes: a tunnel's two directions at the 10%
// cap. Down, responses of eight packets (10 kB); up, a request and four
// inner TCP acknowledgements, each a tail of its own. Each direction's
// repair bytes stay within 10% of its source bytes over every stretch,
// beside four full repairs saved up, and over the whole run within 10%
// and the one full repair a sender starts with. Most responses' tails
// get a full repair (143 of 200: a 10 kB response earns 1040 bytes, a
// repair costs 1410); the uplink's tails, whose bytes pay for little,
// get one small repair in twenty, where each once got its own (the
// uplink's repairs were seven tenths of its bytes).
func TestFECBudgetBoundsRepairBytes(t *testing.T) {
	const maxOverhead, rounds = 0.1, 200
	down, up := newBudgetRun(t, maxOverhead), newBudgetRun(t, maxOverhead)
	for range rounds {
		up.burst(180) // the request
		down.burst(1400, 1400, 1400, 1400, 1400, 1400, 1400, 600)
		for range 4 {
			up.burst(60) // an acknowledgement
		}
		down.ackAll()
		up.ackAll()
	}
	for _, c := range []struct {
		name                         string
		r                            *budgetRun
		sourceBytes, repairBytes     uint64
		repairs, tails, coveredTails int
	}{
		{"down", down, rounds * (7*1400 + 600), 208_680, 148, rounds, 143},
		{"up", up, rounds * (180 + 4*60), 9_690, 51, 5 * rounds, 51},
	} {
		st := c.r.f.stats
		t.Logf("%s: %d source bytes, %d repairs of %d bytes (%.2f%%); %d of %d tails covered",
			c.name, st.SourceBytesSent, st.RepairsSent, st.RepairBytesSent,
			100*float64(st.RepairBytesSent)/float64(st.SourceBytesSent), c.r.covered, c.r.tails)
		c.r.checkBound(maxOverhead)
		if whole := maxOverhead*float64(st.SourceBytesSent) + fecInitialCredit*c.r.f.budget.full; float64(st.RepairBytesSent) > whole {
			t.Errorf("%s: %d repair bytes, more than %v", c.name, st.RepairBytesSent, whole)
		}
		if st.SourceBytesSent != c.sourceBytes || st.RepairBytesSent != c.repairBytes || st.RepairsSent != uint64(c.repairs) ||
			c.r.tails != c.tails || c.r.covered != c.coveredTails {
			t.Errorf("%s: %d source bytes, %d repair bytes, %d repairs, %d of %d tails covered; want %d, %d, %d, %d of %d",
				c.name, st.SourceBytesSent, st.RepairBytesSent, st.RepairsSent, c.r.covered, c.r.tails,
				c.sourceBytes, c.repairBytes, c.repairs, c.coveredTails, c.tails)
		}
	}
}
