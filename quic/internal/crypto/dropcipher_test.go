package crypto

import (
	"math/rand/v2"
	"testing"
)

// TestDropCiphers runs packets, a key update and a reordered packet of the
// old phase through keys whose ciphers both ends drop before every packet:
// everything opens as without the drops, and each drop frees the ciphers.
func TestDropCiphers(t *testing.T) {
	forEachSuiteVersion(t, func(t *testing.T, suiteID uint16, v Version) {
		r := rand.New(rand.NewPCG(uint64(suiteID), 7))
		tx, rx := appPair(t, suiteID, v)
		drop := func() {
			tx.DropCiphers()
			rx.DropCiphers()
			for _, a := range []*AppKeys{tx, rx} {
				for _, g := range a.generations() {
					if g != nil && g.key != nil && g.key.aead != nil {
						t.Fatal("a packet key kept its cipher")
					}
				}
				if a.header.block != nil {
					t.Fatal("the header key kept its cipher")
				}
			}
		}
		round := func(pn uint64, want KeyGen, wantUpdate bool) {
			t.Helper()
			drop()
			pkt, off := send(t, tx, r, pn)
			drop()
			if g, up, err := receive(rx, pkt, off); err != nil || g != want || up != wantUpdate {
				t.Fatalf("pn %d: gen %v updated %v err %v, want %v %v", pn, g, up, err, want, wantUpdate)
			}
		}
		round(0, GenCurrent, false)
		round(1, GenCurrent, false)
		drop()
		late, lateOff := send(t, tx, r, 2)
		if err := tx.Update(); err != nil {
			t.Fatal(err)
		}
		round(3, GenNext, true)
		drop()
		if g, _, err := receive(rx, late, lateOff); err != nil || g != GenPrevious {
			t.Fatalf("late packet of the old phase: gen %v err %v", g, err)
		}
		round(4, GenCurrent, false)
		// Select builds every generation's cipher again, not only the
		// one it chose (RFC 9001 section 6.3).
		drop()
		rx.Select(rx.KeyPhase(), 5)
		for _, g := range rx.generations() {
			if g != nil && g.key != nil && g.key.aead == nil {
				t.Fatal("Select left a generation without its cipher")
			}
		}
	})
}
