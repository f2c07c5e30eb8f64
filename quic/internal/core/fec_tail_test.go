package core

import (
	"bytes"
	"testing"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/recovery"
)

func TestTailRepairsFor(t *testing.T) {
	for _, c := range []struct {
		burst float64
		want  int
	}{
		{0.5, 1}, {1, 1},
		// 1-1/1.5 = 1/3 goes on: 1/9 <= 0.2 after two repairs.
		{1.5, 2},
		// (2/3)^3 = 0.30, (2/3)^4 = 0.198.
		{3, 4},
		{50, tailMaxRepairs},
	} {
		if got := tailRepairsFor(c.burst); got != c.want {
			t.Errorf("tailRepairsFor(%v) = %d, want %d", c.burst, got, c.want)
		}
	}
}

// testFECSender is a sender with the default configuration toward a peer
// decoding 1024 symbols of up to 1400 bytes.
func testFECSender(t testing.TB) *fecSender {
	t.Helper()
	cfg, err := (&FECConfig{}).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	f, err := newFECSender(cfg, 1024, 1400)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sendTail sends sources of the given sizes in packets from next on, then
// the repairs protectTail owes in the following packets, and returns the
// repairs' packet numbers and the next packet number.
func sendTail(t *testing.T, f *fecSender, next uint64, sizes ...int) ([]uint64, uint64) {
	t.Helper()
	pn := next
	for _, n := range sizes {
		if err := f.onSourceSent(pn, bytes.Repeat([]byte{byte(pn)}, n)); err != nil {
			t.Fatal(err)
		}
		pn++
	}
	f.protectTail()
	repairs, pn := drainRepairs(f, pn)
	return repairs, pn
}

// drainRepairs sends the repairs owed in packets from pn on.
func drainRepairs(f *fecSender, pn uint64) ([]uint64, uint64) {
	var repairs []uint64
	for {
		data, id, ok := f.nextRepair()
		if !ok {
			return repairs, pn
		}
		f.onRepairSent(pn, id, len(data))
		repairs = append(repairs, pn)
		pn++
	}
}

// lossyHistory sends 200 full-size sources of which one in 40 is lost,
// reports their fate, and sends the repairs that owes: the controller then
// measures about 2.5% loss. It returns the next packet number.
func lossyHistory(t *testing.T, f *fecSender) uint64 {
	t.Helper()
	res := &recovery.Result{}
	pn := uint64(1)
	for i := range 200 {
		if err := f.onSourceSent(pn, bytes.Repeat([]byte{1}, 1400)); err != nil {
			t.Fatal(err)
		}
		p := recovery.PacketInfo{Space: spaceApp, Number: pn}
		if i%40 == 20 {
			res.Lost = append(res.Lost, p)
		} else {
			res.Acked = append(res.Acked, p)
		}
		pn++
	}
	f.onResult(res)
	_, pn = drainRepairs(f, pn)
	f.budget.credit = (fecMaxCredit - 1) * f.budget.full // room for the next source's share
	if loss, _ := f.ctrl.(*fec.AdaptiveController).Estimate(); loss <= fecCleanLoss {
		t.Fatalf("measured loss %v after the lossy history", loss)
	}
	return pn
}

// TestFECTailRepairsBySize: the tail of a full-size burst gets one repair
// while the measured loss is low; so does the tail of a small request on
// a clean path, but once the path shows more loss than a clean one, a
// small tail gets the repairs a quarter of a full one pays for, up to
// tailMaxRepairs, and they take from the allowance only their bytes.
func TestFECTailRepairsBySize(t *testing.T) {
	if got, _ := sendTail(t, testFECSender(t), 1, 1400, 1400, 1400); len(got) != 1 {
		t.Errorf("full-size tail: %d repairs, want 1", len(got))
	}
	if got, _ := sendTail(t, testFECSender(t), 1, 40); len(got) != 1 {
		t.Errorf("40-byte tail on a clean path: %d repairs, want 1", len(got))
	}
	small := testFECSender(t)
	pn := lossyHistory(t, small)
	before := small.budget.credit + DefaultFECMaxOverhead*40
	if got, _ := sendTail(t, small, pn, 40); len(got) != tailMaxRepairs {
		t.Errorf("40-byte tail: %d repairs, want %d", len(got), tailMaxRepairs)
	}
	// Each repair is its Repair FEC Payload ID and the 40 bytes with
	// their 2-byte length.
	if spent, want := before-small.budget.credit, float64(tailMaxRepairs*(fec.RepairIDLen+2+40)); spent != want {
		t.Errorf("40-byte tail took %v bytes of the allowance, want %v", spent, want)
	}
	// A source of a third of a full one: its repairs cost more than
	// tailSmallShare each, so only one goes.
	mid := testFECSender(t)
	pn = lossyHistory(t, mid)
	if got, _ := sendTail(t, mid, pn, 470); len(got) != 1 {
		t.Errorf("470-byte tail: %d repairs, want 1", len(got))
	}
}

// TestFECTailAckedCountsTrailingLosses: when the tail repair is
// acknowledged, only the sources missing after the newest acknowledged
// one are the tail's to repair; a hole before it is the loss monitor's.
func TestFECTailAckedCountsTrailingLosses(t *testing.T) {
	for _, c := range []struct {
		name    string
		acked   []uint64 // source packets acknowledged with the repair
		missing int
	}{
		{"hole before an acked source", []uint64{1, 3, 4}, 0},
		{"last source lost", []uint64{1, 2, 3}, 1},
		{"last two lost, earlier hole", []uint64{1, 3}, 1},
		{"last three lost", []uint64{1}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := testFECSender(t)
			repairs, _ := sendTail(t, f, 1, 1400, 1400, 1400, 1400)
			if len(repairs) != 1 {
				t.Fatalf("%d tail repairs", len(repairs))
			}
			res := &recovery.Result{}
			for _, pn := range append(c.acked, repairs[0]) {
				res.Acked = append(res.Acked, recovery.PacketInfo{Space: spaceApp, Number: pn})
			}
			tr := f.tail.repairs[0]
			f.onResult(res)
			if got := f.trailingMissing(tr.first, tr.end); got != c.missing {
				t.Errorf("trailing missing %d, want %d", got, c.missing)
			}
		})
	}
}

// TestFECReactionAllOrNothing: a reaction the allowance cannot pay in full
// sends nothing (its repairs could not rebuild the sources, and their
// deadline would hold the retransmissions); one it can pay goes whole.
func TestFECReactionAllOrNothing(t *testing.T) {
	f := testFECSender(t)
	for pn := range uint64(4) {
		if err := f.onSourceSent(pn, bytes.Repeat([]byte{1}, 1400)); err != nil {
			t.Fatal(err)
		}
	}
	full := fec.RepairIDLen + 2 + 1400
	f.budget.credit = 3.5 * float64(full)
	f.oweReaction(4)
	if f.owed != 0 || f.stats.RepairsCapped != 4 {
		t.Errorf("reaction of 4 with 3.5 in hand: owed %d, capped %d", f.owed, f.stats.RepairsCapped)
	}
	f.oweReaction(3)
	repairs, _ := drainRepairs(f, 4)
	if len(repairs) != 3 || f.budget.credit != 0.5*float64(full) || f.stats.RepairBytesSent != uint64(3*full) {
		t.Errorf("reaction of 3 with 3.5 in hand: %d sent, %d bytes, %v left", len(repairs), f.stats.RepairBytesSent, f.budget.credit)
	}
}

// TestFECTailAckedLongRunLeftToRecovery: when the tail repair's
// acknowledgement shows more sources missing than the allowance can
// repair, as after an outage, no repair is owed for them and they are
// left to loss recovery.
func TestFECTailAckedLongRunLeftToRecovery(t *testing.T) {
	f := testFECSender(t)
	sizes := make([]int, 20)
	for i := range sizes {
		sizes[i] = 1400
	}
	repairs, _ := sendTail(t, f, 1, sizes...)
	if len(repairs) != 1 {
		t.Fatalf("%d tail repairs", len(repairs))
	}
	// Sources 1-4 arrive, 5-20 are lost, the tail repair arrives.
	res := &recovery.Result{}
	for _, pn := range []uint64{1, 2, 3, 4, repairs[0]} {
		res.Acked = append(res.Acked, recovery.PacketInfo{Space: spaceApp, Number: pn})
	}
	capped := f.stats.RepairsCapped
	f.onTailAcked(repairs[0])
	f.onResult(res)
	if f.owed != 0 {
		t.Errorf("%d repairs owed for 16 lost sources with %.1f bytes in hand", f.owed, f.budget.credit)
	}
	if f.stats.RepairsCapped < capped+15 {
		t.Errorf("repairs capped %d, want at least %d", f.stats.RepairsCapped, capped+15)
	}
	// No later repair holds them from retransmission.
	if f.givenUp != 20 {
		t.Errorf("sources given up to loss recovery: before %d, want 20", f.givenUp)
	}
}
