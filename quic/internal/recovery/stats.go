package recovery

// Stats are the Sender's counters since it was created.
type Stats struct {
	PacketsSent, BytesSent   uint64
	PacketsAcked, BytesAcked uint64
	PacketsLost, BytesLost   uint64
	// SpuriousLosses counts packets declared lost and acknowledged later.
	SpuriousLosses uint64
	// PacketsRecovered counts packets the peer recovered with FEC, and
	// RecoveredAfterLoss those among them already declared lost (their
	// retransmission was wasted).
	PacketsRecovered, RecoveredAfterLoss uint64
	// CoveredLossesDelayed counts packets whose loss declaration a repair
	// deadline postponed at least once.
	CoveredLossesDelayed uint64
	PTOs                 uint64
	// CongestionSignals counts signals given to the controller (loss,
	// ECN-CE, FEC under signal), whether or not they reduced the window.
	CongestionSignals     uint64
	PersistentCongestions uint64
	// LossSignalsDeferred counts FEC sources declared lost under FECHide
	// whose congestion signal waited for the peer's FEC report, and
	// LossSignalsAvoided those the peer then reported rebuilt.
	LossSignalsDeferred, LossSignalsAvoided uint64
	ECNCEIncreases                          uint64
	// ResumeReconnaissance, ResumeUnvalidated, ResumeValidating,
	// ResumeSafeRetreat and ResumeNormal count the Careful Resume phases
	// entered (RFC 9959 section 3), and ResumeUnvalidatedBytes the bytes
	// sent in the Unvalidated Phase.
	ResumeReconnaissance, ResumeUnvalidated, ResumeValidating uint64
	ResumeSafeRetreat, ResumeNormal                           uint64
	ResumeUnvalidatedBytes                                    uint64
}
