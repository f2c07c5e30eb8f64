package recovery

import "time"

// BBRConfig tunes BBR (draft-ietf-ccwg-bbr, BBRv3). A zero field takes the
// draft's value, named in its comment with the draft's constant; the
// defaults are the draft's section 2.6 (section numbers here are those of
// draft-ietf-ccwg-bbr-01). Gains are ratios, durations are times.
type BBRConfig struct {
	// StartupPacingGain is BBRStartupPacingGain: 4 ln 2 = 2.77, the
	// smallest gain that doubles the delivery rate each round trip.
	StartupPacingGain float64
	// StartupCwndGain is BBRStartupCwndGain: 2.
	StartupCwndGain float64
	// DrainPacingGain is BBRDrainPacingGain: 0.35, below 1/StartupCwndGain
	// so that Startup's queue drains within a round trip.
	DrainPacingGain float64
	// CwndGain is BBRDefaultCwndGain: 2, the window over the estimated
	// bandwidth-delay product outside Startup and ProbeBW_UP.
	CwndGain float64
	// ProbeUpPacingGain and ProbeUpCwndGain are ProbeBW_UP's gains: 1.25
	// and 2.25.
	ProbeUpPacingGain, ProbeUpCwndGain float64
	// ProbeDownPacingGain is ProbeBW_DOWN's pacing gain: 0.9.
	ProbeDownPacingGain float64
	// PacingMargin is BBRPacingMarginPercent as a fraction: 0.01. BBR
	// paces 1% below its estimate so that no queue builds at the
	// bottleneck from pacing alone.
	PacingMargin float64
	// LossThresh is BBRLossThresh: 0.02, the loss rate over a round trip
	// above which the data in flight is deemed too high (inflight_hi).
	LossThresh float64
	// Beta is BBRBeta: 0.7, the multiplicative cut of the lower bounds
	// (bw_lo, inflight_lo) in a round with loss, and of inflight_hi's
	// floor.
	Beta float64
	// Headroom is BBRHeadroom: 0.15, the fraction of inflight_hi left
	// free in ProbeBW_CRUISE and ProbeRTT for other flows.
	Headroom float64
	// ECNThresh is the fraction of packets marked ECN-CE in a round trip
	// above which the data in flight is deemed too high, as LossThresh for
	// losses: 0.5 (BBRv3's bbr_ecn_thresh; the draft leaves the ECN
	// response to its section on ECN and to the L4S deployments).
	ECNThresh float64
	// MinPipeCwndPackets is BBRMinPipeCwnd in packets: 4.
	MinPipeCwndPackets int
	// FullBwThresh and FullBwCount end Startup when the delivery rate has
	// grown less than FullBwThresh-fold for FullBwCount round trips: 1.25
	// and 3 (section 5.3.1.2).
	FullBwThresh float64
	FullBwCount  int
	// StartupFullLossCount is BBRStartupFullLossCnt: 6 loss events in a
	// round trip whose loss rate exceeds LossThresh end Startup (section
	// 5.3.1.3).
	StartupFullLossCount int
	// ExtraAckedRounds is BBRExtraAckedFilterLen: 10 round trips, the
	// window of the ACK aggregation estimate (section 5.5.9).
	ExtraAckedRounds int
	// MinRTTFilterLen is MinRTTFilterLen: 10 s, how long a minimum RTT
	// sample is believed.
	MinRTTFilterLen time.Duration
	// ProbeRTTInterval is ProbeRTTInterval: 5 s; when no RTT sample has
	// matched the minimum for this long, BBR enters ProbeRTT.
	ProbeRTTInterval time.Duration
	// ProbeRTTDuration is ProbeRTTDuration: 200 ms at the reduced window
	// (and at least a round trip).
	ProbeRTTDuration time.Duration
	// ProbeRTTSlack is how far above probe_rtt_min_delay, as a fraction
	// of it, an RTT sample may lie and still count as a sample at the
	// minimum, which postpones ProbeRTT: 1/64 (the draft counts only a
	// sample below the minimum; see updateMinRTT).
	ProbeRTTSlack float64
	// ProbeRTTCwndGain is BBRProbeRTTCwndGain: 0.5 of the estimated
	// bandwidth-delay product in ProbeRTT.
	ProbeRTTCwndGain float64
	// ProbeWaitBase and ProbeWaitRand set the wall-clock time between
	// bandwidth probes, drawn uniformly in [ProbeWaitBase, ProbeWaitBase +
	// ProbeWaitRand): 2 s and 1 s (section 5.3.3.5, BBRPickProbeWait).
	ProbeWaitBase, ProbeWaitRand time.Duration
	// Seed seeds the generator of the probe wait's random parts (and the
	// random round, 0 or 1, added to it): flows sharing a bottleneck
	// should use different seeds so that their probes do not
	// synchronize. Zero is a fixed seed.
	Seed uint64
}

// The draft's constants (draft-ietf-ccwg-bbr section 2.6 and section 5).
const (
	bbrStartupPacingGain    = 2.77
	bbrStartupCwndGain      = 2
	bbrDrainPacingGain      = 0.35
	bbrCwndGain             = 2
	bbrProbeUpPacingGain    = 1.25
	bbrProbeUpCwndGain      = 2.25
	bbrProbeDownPacingGain  = 0.9
	bbrPacingMargin         = 0.01
	bbrLossThresh           = 0.02
	bbrBeta                 = 0.7
	bbrHeadroom             = 0.15
	bbrECNThresh            = 0.5
	bbrMinPipeCwndPackets   = 4
	bbrFullBwThresh         = 1.25
	bbrFullBwCount          = 3
	bbrStartupFullLossCount = 6
	bbrExtraAckedRounds     = 10
	bbrMinRTTFilterLen      = 10 * time.Second
	bbrProbeRTTInterval     = 5 * time.Second
	bbrProbeRTTDuration     = 200 * time.Millisecond
	bbrProbeRTTCwndGain     = 0.5
	bbrProbeRTTSlack        = 1.0 / 64
	bbrProbeWaitBase        = 2 * time.Second
	bbrProbeWaitRand        = time.Second
)

func (b BBRConfig) withDefaults() BBRConfig {
	setDefault(&b.StartupPacingGain, bbrStartupPacingGain)
	setDefault(&b.StartupCwndGain, bbrStartupCwndGain)
	setDefault(&b.DrainPacingGain, bbrDrainPacingGain)
	setDefault(&b.CwndGain, bbrCwndGain)
	setDefault(&b.ProbeUpPacingGain, bbrProbeUpPacingGain)
	setDefault(&b.ProbeUpCwndGain, bbrProbeUpCwndGain)
	setDefault(&b.ProbeDownPacingGain, bbrProbeDownPacingGain)
	setDefault(&b.PacingMargin, bbrPacingMargin)
	setDefault(&b.LossThresh, bbrLossThresh)
	setDefault(&b.Beta, bbrBeta)
	setDefault(&b.Headroom, bbrHeadroom)
	setDefault(&b.ECNThresh, bbrECNThresh)
	setDefault(&b.MinPipeCwndPackets, bbrMinPipeCwndPackets)
	setDefault(&b.FullBwThresh, bbrFullBwThresh)
	setDefault(&b.FullBwCount, bbrFullBwCount)
	setDefault(&b.StartupFullLossCount, bbrStartupFullLossCount)
	setDefault(&b.ExtraAckedRounds, bbrExtraAckedRounds)
	setDefault(&b.MinRTTFilterLen, bbrMinRTTFilterLen)
	setDefault(&b.ProbeRTTInterval, bbrProbeRTTInterval)
	setDefault(&b.ProbeRTTDuration, bbrProbeRTTDuration)
	setDefault(&b.ProbeRTTCwndGain, bbrProbeRTTCwndGain)
	setDefault(&b.ProbeRTTSlack, bbrProbeRTTSlack)
	setDefault(&b.ProbeWaitBase, bbrProbeWaitBase)
	setDefault(&b.ProbeWaitRand, bbrProbeWaitRand)
	return b
}

// checks appends BBRConfig's ranges to dst, for Config.Validate.
func (b *BBRConfig) checks(dst []check) []check {
	return append(dst, []check{
		{b.StartupPacingGain >= 1 && b.StartupCwndGain >= 1, "BBR Startup gains must be at least 1"},
		{b.DrainPacingGain > 0 && b.DrainPacingGain < 1, "BBR.DrainPacingGain must be in (0, 1)"},
		{b.CwndGain >= 1 && b.ProbeUpCwndGain >= 1 && b.ProbeUpPacingGain >= 1, "BBR cwnd and ProbeBW_UP gains must be at least 1"},
		{b.ProbeDownPacingGain > 0 && b.ProbeDownPacingGain <= 1, "BBR.ProbeDownPacingGain must be in (0, 1]"},
		{b.PacingMargin >= 0 && b.PacingMargin < 1, "BBR.PacingMargin must be in [0, 1)"},
		{b.LossThresh > 0 && b.LossThresh < 1 && b.ECNThresh > 0 && b.ECNThresh <= 1, "BBR loss and ECN thresholds must be in (0, 1)"},
		{b.Beta > 0 && b.Beta < 1 && b.Headroom >= 0 && b.Headroom < 1, "BBR.Beta must be in (0, 1) and Headroom in [0, 1)"},
		{b.MinPipeCwndPackets >= 1, "BBR.MinPipeCwndPackets must be at least 1"},
		{b.FullBwThresh > 1 && b.FullBwCount >= 1 && b.StartupFullLossCount >= 1 && b.ExtraAckedRounds >= 1, "BBR Startup thresholds and counts must be positive"},
		{b.MinRTTFilterLen > 0 && b.ProbeRTTInterval > 0 && b.ProbeRTTDuration > 0, "BBR filter lengths and ProbeRTT times must be positive"},
		{b.ProbeRTTCwndGain > 0 && b.ProbeRTTCwndGain <= 1, "BBR.ProbeRTTCwndGain must be in (0, 1]"},
		{b.ProbeRTTSlack >= 0 && b.ProbeRTTSlack < 1, "BBR.ProbeRTTSlack must be in [0, 1)"},
		{b.ProbeWaitBase > 0 && b.ProbeWaitRand >= 0, "BBR probe wait must be positive"},
	}...)
}
