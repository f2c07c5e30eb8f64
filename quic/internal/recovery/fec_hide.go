package recovery

// Under FECHide the path is known to lose packets without congestion (RFC
// 9265 section 4.2 leaves the choice to the deployment): a packet the peer
// rebuilt from repairs is delivered, not lost, for the controller
// (OnRecovered). A lost repair packet is the same kind of evidence: the
// path dropped a packet that carried no data, and whether the data it
// protected arrived shows in the sources' own fates (a source neither
// acknowledged nor rebuilt is a loss, and signals). So under FECHide a
// repair packet's loss reduces nothing and counts toward no persistent
// congestion, as a path MTU probe's; under FECSignal it is a loss like any
// other. Without this, on a path with 1% random loss and repairs at a few
// percent of the packets, a lost repair cut the window every few thousand
// packets. FECAuto treats a lost repair so too, unless the path shows
// congestion when it is declared lost (fec_auto.go).

// hidesFECLosses reports whether the policy hides the losses FEC makes
// good: a repair's, and a source's until its rebuild could be reported.
// FECAuto does, where the path shows no congestion (fec_auto.go).
func (p FECPolicy) hidesFECLosses() bool { return p == FECHide || p == FECAuto }

// lossUnsignaled reports whether the loss of the packet is no congestion
// signal: a path MTU probe, or a repair under FECHide.
func (p *sentPacket) lossUnsignaled() bool {
	return p.has(flagPathProbe) || p.has(flagHiddenRepair)
}
