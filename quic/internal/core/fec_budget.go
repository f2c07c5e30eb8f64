package core

import "github.com/satquic/satquic/fec"

// The overhead allowance (FECConfig.MaxOverhead). Every repair a sender
// sends, proactive, in reaction to known losses or over a tail, is paid
// for in bytes, its FEC_REPAIR data (the Repair FEC Payload ID and the
// coded symbol, as FECStats.RepairBytesSent counts it), from an allowance
// that each source symbol sent adds MaxOverhead times its length to. A
// repair goes only if the allowance holds its whole cost, so the
// allowance never goes below zero, and over any stretch of a connection
// the repair data sent is at most MaxOverhead times the source data sent
// in it, plus what the allowance held at its start: at most fecMaxCredit
// full repairs, a few packets over a few round trips.
//
// The allowance counts bytes, not packets: charged a repair per repair,
// the small sources of a tunnel's uplink (inner TCP acknowledgements)
// earned as much as full ones and spent it on a tail repair after nearly
// every acknowledgement (repairs were two thirds of the bytes). A small
// source now earns little, and cover goes where the bytes are, as the
// tails of a tunnel's responses.

const (
	// fecMaxCredit caps the allowance saved up, in full repairs: enough
	// for the reaction to a burst of lost packets.
	fecMaxCredit = 4
	// fecInitialCredit is the allowance of a new sender, in full
	// repairs: enough to protect the tail of a first short burst.
	fecInitialCredit = 1
)

// repairBudget is a sender's overhead allowance, in bytes of repair data.
type repairBudget struct {
	// share is MaxOverhead: the repair bytes each source byte earns.
	share float64
	// credit is what repairs may still take; full is a full repair's
	// length, over sources of the largest symbol.
	credit, full float64
}

// newRepairBudget starts the allowance of a sender whose largest source
// symbol is maxSymbol bytes.
func newRepairBudget(share float64, maxSymbol int) repairBudget {
	full := float64(fec.RepairIDLen + 2 + maxSymbol) // a coded symbol has a 2-byte length
	return repairBudget{share: share, credit: fecInitialCredit * full, full: full}
}

// earn adds the share of a source symbol of n bytes.
func (b *repairBudget) earn(n int) {
	b.credit = min(b.credit+b.share*float64(n), fecMaxCredit*b.full)
}

// affords reports whether the allowance holds repairs repairs of cost
// bytes each.
func (b *repairBudget) affords(repairs, cost int) bool {
	return float64(repairs)*float64(cost) <= b.credit
}

// spend takes a repair of n bytes, which affords allowed: the allowance
// stops at zero, or where a debt already left it (spendInDebt).
func (b *repairBudget) spend(n int) { b.credit = max(b.credit-float64(n), min(b.credit, 0)) }

// affordsInDebt reports whether the allowance, allowed into a debt of
// debt full repairs, holds repairs full repairs: the repairs of sources
// known lost (fec_lossrepair.go), whose windows reach back over full
// sources.
func (b *repairBudget) affordsInDebt(repairs, debt int) bool {
	return float64(repairs)*b.full <= b.credit+float64(debt)*b.full
}

// spendInDebt takes a repair of n bytes that affordsInDebt allowed, down
// to a debt of debt full repairs. Proactive and tail repairs wait until
// the sources sent since have paid it back.
func (b *repairBudget) spendInDebt(n, debt int) {
	b.credit = max(b.credit-float64(n), -float64(debt)*b.full)
}

// drain empties the allowance (the overload guard, fec_overload.go).
func (b *repairBudget) drain() { b.credit = 0 }

// repairCost is what the next repair over the controller's window costs
// now, in bytes (0 with no source in the window).
func (f *fecSender) repairCost() int {
	f.enc.SetWindow(f.ctrl.Window())
	return f.enc.RepairLen()
}

// oweAffordable adds n repairs to send if the allowance holds them beside
// those already owed, at what a repair costs now, and reports whether it
// did; otherwise they count as capped.
func (f *fecSender) oweAffordable(n int) bool {
	if n <= 0 {
		return true
	}
	if !f.budget.affords(f.owed+n, f.repairCost()) {
		f.stats.RepairsCapped += uint64(n)
		return false
	}
	f.owed += n
	return true
}
